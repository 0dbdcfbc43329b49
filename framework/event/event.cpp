#include "event/event.hpp"

#include <cstring>

namespace pmixpp::events {

pmix_proc_t sms_source() noexcept {
    pmix_proc_t p{};
    p.rank = PMIX_RANK_UNDEF;
    return p;
}

bool same_proc(const pmix_proc_t &a, const pmix_proc_t &b) noexcept {
    return a.rank == b.rank && std::strncmp(a.nspace, b.nspace, PMIX_MAX_NSLEN) == 0;
}

bool proc_matches(const pmix_proc_t &pattern, const pmix_proc_t &proc) noexcept {
    if (std::strncmp(pattern.nspace, proc.nspace, PMIX_MAX_NSLEN) != 0) return false;
    return pattern.rank == PMIX_RANK_WILDCARD || proc.rank == PMIX_RANK_WILDCARD ||
           pattern.rank == proc.rank;
}

std::vector<pmix_proc_t> procs_of(const pmix_value_t &value) {
    std::vector<pmix_proc_t> out;
    if (value.type == PMIX_PROC && value.data.proc != nullptr) {
        out.push_back(*value.data.proc);
    } else if (value.type == PMIX_DATA_ARRAY && value.data.darray != nullptr &&
               value.data.darray->type == PMIX_PROC && value.data.darray->array != nullptr) {
        const auto *p = static_cast<const pmix_proc_t *>(value.data.darray->array);
        out.assign(p, p + value.data.darray->size);
    }
    return out;
}

Event Event::make(pmix_status_t status, const pmix_proc_t *source, pmix_data_range_t range,
                  const pmix_info_t *info, std::size_t ninfo) {
    Event ev;
    ev.status = status;
    ev.source = source != nullptr ? *source : sms_source();
    ev.range = range;
    if (info != nullptr && ninfo > 0) {
        ev.info = std::make_shared<const wire::InfoArray>(wire::InfoArray::copy_of(info, ninfo));
    }
    ev.derive();
    return ev;
}

void Event::derive() {
    custom_range.clear();
    affected.clear();
    non_default = do_not_cache = false;
    for (const auto &i : info_span()) {
        if (PMIX_CHECK_KEY(&i, PMIX_EVENT_CUSTOM_RANGE)) {
            custom_range = procs_of(i.value);
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_AFFECTED_PROC) ||
                   PMIX_CHECK_KEY(&i, PMIX_EVENT_AFFECTED_PROCS)) {
            auto p = procs_of(i.value);
            affected.insert(affected.end(), p.begin(), p.end());
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_NON_DEFAULT)) {
            non_default = info_true(i);
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_DO_NOT_CACHE)) {
            do_not_cache = info_true(i);
        }
    }
}

void Event::write(wire::BodyWriter &w) const {
    w.i32(status).proc(source).u8(static_cast<std::uint8_t>(range));
    w.infos(info ? info->data() : nullptr, info ? info->size() : 0);
}

std::vector<std::uint8_t> Event::encode() const {
    wire::BodyWriter w;
    write(w);
    return w.take();
}

std::optional<Event> Event::read(wire::BodyReader &r) {
    Event ev;
    std::int32_t status = 0;
    std::uint8_t range = 0;
    wire::InfoArray info;
    r.i32(status);
    r.proc(ev.source);
    r.u8(range);
    r.infos(info);
    if (!r.ok()) return std::nullopt;
    ev.status = status;
    ev.range = range;
    if (info.size() > 0) ev.info = std::make_shared<const wire::InfoArray>(std::move(info));
    ev.derive();
    return ev;
}

}  // namespace pmixpp::events
