#include "event/registry.hpp"

#include <algorithm>
#include <cstring>

#include <spdlog/fmt/fmt.h>

#include "event/attributes.hpp"

namespace pmixpp::events {

namespace {

const char *category_name(Category c) {
    switch (c) {
        case Category::single_code:
            return "single-code";
        case Category::multi_code:
            return "multi-code";
        case Category::fallback:
            return "default";
    }
    return "?";
}

mca::Status registration_error(std::string message) {
    return mca::Status(PMIX_ERR_EVENT_REGISTRATION, std::move(message));
}

std::optional<std::string> string_of(const pmix_info_t &i) {
    if (i.value.type != PMIX_STRING || i.value.data.string == nullptr) return std::nullopt;
    return std::string(i.value.data.string);
}

std::optional<pmix_data_range_t> range_of(const pmix_value_t &v) {
    switch (v.type) {
        case PMIX_DATA_RANGE:
            return v.data.range;
        case PMIX_UINT8:
            return v.data.uint8;
        case PMIX_INT:
            return v.data.integer >= 0 ? std::optional<pmix_data_range_t>(
                                             static_cast<pmix_data_range_t>(v.data.integer))
                                       : std::nullopt;
        default:
            return std::nullopt;
    }
}

bool any_overlap(const std::vector<pmix_proc_t> &patterns, const std::vector<pmix_proc_t> &procs) {
    for (const auto &p : patterns) {
        for (const auto &q : procs) {
            if (proc_matches(p, q)) return true;
        }
    }
    return false;
}

bool same_nspace(const pmix_proc_t &a, const pmix_proc_t &b) {
    return std::strncmp(a.nspace, b.nspace, PMIX_MAX_NSLEN) == 0;
}

// The registration's PMIX_RANGE filter on the event's source.
bool source_in_range(const RegistrationSpec &spec, const Event &event, const pmix_proc_t &self) {
    if (!spec.source_range) return true;
    switch (*spec.source_range) {
        case PMIX_RANGE_PROC_LOCAL:
            return same_proc(event.source, self);
        case PMIX_RANGE_NAMESPACE:
            return same_nspace(event.source, self);
        case PMIX_RANGE_LOCAL:
            // This node: the SMS of the node, ourselves, or our job's processes
            // (a server serves one node; docs/events.md).
            return event.from_sms() || same_nspace(event.source, self);
        case PMIX_RANGE_RM:
            return event.from_sms();
        case PMIX_RANGE_CUSTOM:
            return std::any_of(spec.source_procs.begin(), spec.source_procs.end(),
                               [&](const pmix_proc_t &p) { return proc_matches(p, event.source); });
        default:  // UNDEF, SESSION, GLOBAL: every source
            return true;
    }
}

}  // namespace

mca::Result<RegistrationSpec> RegistrationSpec::parse(std::span<const pmix_status_t> codes,
                                                      std::span<const pmix_info_t> info) {
    RegistrationSpec spec;
    spec.codes.assign(codes.begin(), codes.end());
    std::vector<Placement> placements;
    std::optional<bool> job_level, enviro_level;
    for (const auto &i : info) {
        if (PMIX_CHECK_KEY(&i, PMIX_EVENT_HDLR_NAME)) {
            auto s = string_of(i);
            if (!s) return mca::Status(PMIX_ERR_BAD_PARAM, "PMIX_EVENT_HDLR_NAME is not a string");
            spec.name = *s;
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_HDLR_FIRST)) {
            if (info_true(i)) placements.push_back(Placement::first);
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_HDLR_LAST)) {
            if (info_true(i)) placements.push_back(Placement::last);
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)) {
            if (info_true(i)) placements.push_back(Placement::first_in_category);
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_HDLR_LAST_IN_CATEGORY)) {
            if (info_true(i)) placements.push_back(Placement::last_in_category);
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_HDLR_PREPEND)) {
            if (info_true(i)) placements.push_back(Placement::prepend);
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_HDLR_APPEND)) {
            if (info_true(i)) placements.push_back(Placement::append);
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_HDLR_BEFORE) ||
                   PMIX_CHECK_KEY(&i, PMIX_EVENT_HDLR_AFTER)) {
            auto s = string_of(i);
            if (!s)
                return mca::Status(PMIX_ERR_BAD_PARAM, fmt::format("{} is not a string", i.key));
            placements.push_back(PMIX_CHECK_KEY(&i, PMIX_EVENT_HDLR_BEFORE) ? Placement::before
                                                                            : Placement::after);
            spec.relative_to = *s;
        } else if (PMIX_CHECK_KEY(&i, PMIX_RANGE)) {
            spec.source_range = range_of(i.value);
            if (!spec.source_range)
                return mca::Status(PMIX_ERR_BAD_PARAM, "PMIX_RANGE is not a range");
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_CUSTOM_RANGE)) {
            spec.source_procs = procs_of(i.value);
            if (!spec.source_range) spec.source_range = PMIX_RANGE_CUSTOM;
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_AFFECTED_PROC) ||
                   PMIX_CHECK_KEY(&i, PMIX_EVENT_AFFECTED_PROCS)) {
            auto p = procs_of(i.value);
            spec.affected.insert(spec.affected.end(), p.begin(), p.end());
        } else if (PMIX_CHECK_KEY(&i, kJobLevel)) {
            job_level = info_true(i);
        } else if (PMIX_CHECK_KEY(&i, kEnviroLevel)) {
            enviro_level = info_true(i);
        } else if (PMIX_CHECK_KEY(&i, PMIX_EVENT_RETURN_OBJECT)) {
            if (i.value.type == PMIX_POINTER) spec.return_object = i.value.data.ptr;
        }
    }
    if (placements.size() > 1) {
        return mca::Status(PMIX_ERR_BAD_PARAM,
                           "a registration may give only one of PMIX_EVENT_HDLR_FIRST, _LAST, "
                           "_FIRST_IN_CATEGORY, _LAST_IN_CATEGORY, _BEFORE, _AFTER, _PREPEND, "
                           "_APPEND");
    }
    if (!placements.empty()) spec.placement = placements.front();
    // Only-job (JOB_LEVEL), only-environment (ENVIRO_LEVEL), both when both or
    // neither is given (docs/events.md).
    const bool job = job_level.value_or(false), env = enviro_level.value_or(false);
    if (job != env) {
        spec.job_events = job;
        spec.environment_events = env;
    }
    return spec;
}

std::vector<pmix_info_t> RegistrationSpec::filter_info() const {
    std::vector<pmix_info_t> out;
    auto add = [&](const char *key, const void *v, pmix_data_type_t t) {
        out.emplace_back();
        std::memset(&out.back(), 0, sizeof(pmix_info_t));
        PMIx_Info_load(&out.back(), key, v, t);
    };
    auto add_procs = [&](const char *key, const std::vector<pmix_proc_t> &procs) {
        pmix_data_array_t da{};
        da.type = PMIX_PROC;
        da.size = procs.size();
        da.array = const_cast<pmix_proc_t *>(procs.data());
        add(key, &da, PMIX_DATA_ARRAY);
    };
    if (!name.empty()) add(PMIX_EVENT_HDLR_NAME, name.c_str(), PMIX_STRING);
    if (source_range) add(PMIX_RANGE, &*source_range, PMIX_DATA_RANGE);
    if (!source_procs.empty()) add_procs(PMIX_EVENT_CUSTOM_RANGE, source_procs);
    if (!affected.empty()) add_procs(PMIX_EVENT_AFFECTED_PROCS, affected);
    if (job_events != environment_events) {
        const bool t = true;
        add(job_events ? kJobLevel : kEnviroLevel, &t, PMIX_BOOL);
    }
    return out;
}

bool matches(const RegistrationSpec &spec, const Event &event, const pmix_proc_t &self) {
    if (spec.codes.empty()) {
        if (event.non_default) return false;
    } else if (std::find(spec.codes.begin(), spec.codes.end(), event.status) == spec.codes.end()) {
        return false;
    }
    const bool environment = event.is_environment();
    if (environment ? !spec.environment_events : !spec.job_events) return false;
    if (!source_in_range(spec, event, self)) return false;
    if (!spec.affected.empty() && !any_overlap(spec.affected, event.affected)) return false;
    return true;
}

// ---------------------------------------------------------------------------------------------

std::optional<std::size_t> HandlerRegistry::find_by_name(const std::string &name) const {
    for (const auto &[id, e] : handlers_) {
        if (e.handler->spec.name == name) return id;
    }
    return std::nullopt;
}

mca::Status HandlerRegistry::place(std::size_t id, const RegistrationSpec &spec) {
    const Category cat = spec.category();
    const auto c = static_cast<std::size_t>(cat);
    auto &list = categories_[c];
    const std::size_t front = first_in_category_[c] ? 1 : 0;
    const std::size_t back = list.size() - (last_in_category_[c] ? 1 : 0);
    switch (spec.placement) {
        case Placement::first:
            if (first_) {
                return registration_error(fmt::format("handler {} is already registered FIRST",
                                                      handlers_.at(*first_).handler->result_key));
            }
            first_ = id;
            return mca::Status::success();
        case Placement::last:
            if (last_) {
                return registration_error(fmt::format("handler {} is already registered LAST",
                                                      handlers_.at(*last_).handler->result_key));
            }
            last_ = id;
            return mca::Status::success();
        case Placement::first_in_category:
            if (first_in_category_[c]) {
                return registration_error(fmt::format(
                    "the {} category already has a FIRST_IN_CATEGORY handler", category_name(cat)));
            }
            first_in_category_[c] = id;
            list.insert(list.begin(), id);
            return mca::Status::success();
        case Placement::last_in_category:
            if (last_in_category_[c]) {
                return registration_error(fmt::format(
                    "the {} category already has a LAST_IN_CATEGORY handler", category_name(cat)));
            }
            last_in_category_[c] = id;
            list.push_back(id);
            return mca::Status::success();
        case Placement::prepend:
            list.insert(list.begin() + static_cast<std::ptrdiff_t>(front), id);
            return mca::Status::success();
        case Placement::append:
            list.insert(list.begin() + static_cast<std::ptrdiff_t>(back), id);
            return mca::Status::success();
        case Placement::before:
        case Placement::after: {
            const bool before = spec.placement == Placement::before;
            const char *what = before ? "BEFORE" : "AFTER";
            auto target = find_by_name(spec.relative_to);
            if (!target) {
                return registration_error(fmt::format(
                    "{} names handler '{}', which is not registered", what, spec.relative_to));
            }
            if (before && (target == first_ || target == first_in_category_[c])) {
                return registration_error(
                    fmt::format("no handler may be registered before '{}' (it is declared first)",
                                spec.relative_to));
            }
            if (!before && (target == last_ || target == last_in_category_[c])) {
                return registration_error(
                    fmt::format("no handler may be registered after '{}' (it is declared last)",
                                spec.relative_to));
            }
            auto pos = std::find(list.begin(), list.end(), *target);
            if (pos == list.end()) {
                return registration_error(fmt::format(
                    "{} names handler '{}' of the {} category; this handler is in the {} category",
                    what, spec.relative_to,
                    category_name(handlers_.at(*target).handler->spec.category()),
                    category_name(cat)));
            }
            list.insert(before ? pos : pos + 1, id);
            return mca::Status::success();
        }
    }
    return registration_error("unknown placement");
}

mca::Result<std::size_t> HandlerRegistry::add(RegistrationSpec spec, pmix_notification_fn_t fn) {
    if (!spec.name.empty() && find_by_name(spec.name)) {
        return registration_error(
            fmt::format("an event handler named '{}' is already registered", spec.name));
    }
    const std::size_t id = next_id_;
    auto h = std::make_shared<Handler>();
    h->id = id;
    h->fn = fn;
    h->result_key = spec.name.empty() ? fmt::format("pmixpp.evhdlr.{}", id) : spec.name;
    if (auto st = place(id, spec); !st.ok()) return st;
    h->spec = std::move(spec);
    handlers_[id] = Entry{std::move(h), false};
    ++next_id_;
    return id;
}

void HandlerRegistry::activate(std::size_t id) {
    if (auto it = handlers_.find(id); it != handlers_.end()) it->second.active = true;
}

bool HandlerRegistry::active(std::size_t id) const {
    auto it = handlers_.find(id);
    return it != handlers_.end() && it->second.active;
}

std::shared_ptr<const Handler> HandlerRegistry::find(std::size_t id) const {
    auto it = handlers_.find(id);
    return it == handlers_.end() ? nullptr : it->second.handler;
}

bool HandlerRegistry::remove(std::size_t id) {
    auto it = handlers_.find(id);
    if (it == handlers_.end()) return false;
    handlers_.erase(it);
    auto clear = [id](std::optional<std::size_t> &slot) {
        if (slot == id) slot.reset();
    };
    clear(first_);
    clear(last_);
    for (std::size_t c = 0; c < categories_.size(); ++c) {
        clear(first_in_category_[c]);
        clear(last_in_category_[c]);
        std::erase(categories_[c], id);
    }
    return true;
}

std::vector<std::size_t> HandlerRegistry::order() const {
    std::vector<std::size_t> out;
    if (first_) out.push_back(*first_);
    for (const auto &list : categories_) out.insert(out.end(), list.begin(), list.end());
    if (last_) out.push_back(*last_);
    return out;
}

void HandlerRegistry::chain_for(const Event &event, const pmix_proc_t &self,
                                std::vector<std::shared_ptr<const Handler>> &out) const {
    // In order() without building it (this runs for every event received).
    auto consider = [&](std::size_t id) {
        const Entry &e = handlers_.at(id);
        if (e.active && matches(e.handler->spec, event, self)) out.push_back(e.handler);
    };
    if (first_) consider(*first_);
    for (const auto &list : categories_) {
        for (std::size_t id : list) consider(id);
    }
    if (last_) consider(*last_);
}

}  // namespace pmixpp::events
