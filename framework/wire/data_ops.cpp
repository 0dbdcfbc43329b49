// Releasing and printing PMIx data, driven by the same field descriptions
// as the codec (fields.hpp).
#include <hwloc.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

#include "runtime/topology.hpp"
#include "wire/codec.hpp"
#include "wire/fields.hpp"

namespace pmixpp::wire {
namespace {

bool is_hwloc(const char *source) {
    return source != nullptr && std::strncmp(source, "hwloc", 5) == 0;
}

// Frees what each field owns. Tolerates partially decoded objects: every
// pointer is either NULL or owned, and every count matches its array.
class Destroyer {
  public:
    static constexpr bool kReleasesMemory = true;
    bool ok() const { return true; }
    void fail(pmix_status_t) {}

    template <class T>
    void num(T &) {}
    void str(char *&s) {
        std::free(s);
        s = nullptr;
    }
    void fixed(char *, std::size_t) {}
    void bytes(char *&p, std::size_t &n) {
        std::free(p);
        p = nullptr;
        n = 0;
    }
    void argv(char **&a) {
        for (std::size_t i = 0; a && a[i]; ++i) std::free(a[i]);
        std::free(a);
        a = nullptr;
    }
    template <class T>
    void array(T *&p, std::size_t &n) {
        for (std::size_t i = 0; p && i < n; ++i) visit(*this, p[i]);
        std::free(p);
        p = nullptr;
        n = 0;
    }
    void typed_array(pmix_data_type_t t, void *&arr, std::size_t &n) {
        std::size_t es = element_size(t);
        for (std::size_t i = 0; arr && es && i < n; ++i)
            visit_typed(*this, t, static_cast<char *>(arr) + i * es);
        std::free(arr);
        arr = nullptr;
        n = 0;
    }
    void boxed(pmix_data_type_t t, void *&ptr) {
        if (ptr) visit_typed(*this, t, ptr);
        std::free(ptr);
        ptr = nullptr;
    }
    void type_tag(pmix_data_type_t &) {}
    void pointer(void *&) {}  // PMIX_POINTER never owns what it points to
    void topology(pmix_topology_t &t) {
        // PMIx_Load_topology hands out the library's own topology: the library frees it.
        if (is_hwloc(t.source) && t.topology && !runtime::is_local_topology(t.topology))
            hwloc_topology_destroy(static_cast<hwloc_topology_t>(t.topology));
        t.topology = nullptr;
        str(t.source);
    }
    void cpuset(pmix_cpuset_t &c) {
        if (is_hwloc(c.source) && c.bitmap)
            hwloc_bitmap_free(static_cast<hwloc_bitmap_t>(c.bitmap));
        c.bitmap = nullptr;
        str(c.source);
    }
    void buffer(pmix_data_buffer_t &b) {
        std::free(b.base_ptr);
        std::memset(&b, 0, sizeof b);
    }
};

class Printer {
  public:
    bool ok() const { return true; }
    void fail(pmix_status_t) { emit("<unsupported>"); }

    template <class T>
    void num(T &x) {
        if constexpr (std::is_same_v<T, bool>) {
            emit(x ? "true" : "false");
        } else if constexpr (std::is_floating_point_v<T>) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%g", static_cast<double>(x));
            emit(buf);
        } else if constexpr (std::is_signed_v<T>) {
            emit(std::to_string(static_cast<long long>(x)));
        } else {
            emit(std::to_string(static_cast<unsigned long long>(x)));
        }
    }
    void str(char *&s) { emit(s ? s : "NULL"); }
    void fixed(char *buf, std::size_t cap) { emit(std::string(buf, strnlen(buf, cap))); }
    void bytes(char *&p, std::size_t &n) { emit("<" + std::to_string(p ? n : 0) + " bytes>"); }
    void argv(char **&a) {
        open('[');
        for (std::size_t i = 0; a && a[i]; ++i) str(a[i]);
        close(']');
    }
    template <class T>
    void array(T *&p, std::size_t &n) {
        open('[');
        for (std::size_t i = 0; p && i < n; ++i) {
            open('{');
            visit(*this, p[i]);
            close('}');
        }
        close(']');
    }
    void typed_array(pmix_data_type_t t, void *&arr, std::size_t &n) {
        std::size_t es = element_size(t);
        open('[');
        for (std::size_t i = 0; arr && es && i < n; ++i) {
            open('{');
            visit_typed(*this, t, static_cast<char *>(arr) + i * es);
            close('}');
        }
        close(']');
    }
    void boxed(pmix_data_type_t t, void *&ptr) {
        if (!ptr) return emit("NULL");
        open('{');
        visit_typed(*this, t, ptr);
        close('}');
    }
    void type_tag(pmix_data_type_t &t) {
        const char *name = type_name(t);
        emit(std::string(name ? name : "UNKNOWN-TYPE") + ":");
        glue_ = true;
    }
    void pointer(void *&p) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%p", p);
        emit(buf);
    }
    void topology(pmix_topology_t &t) {
        str(t.source);
        emit(t.topology ? "<topology>" : "<no topology>");
    }
    void cpuset(pmix_cpuset_t &c) {
        str(c.source);
        char *list = nullptr;
        if (is_hwloc(c.source) && c.bitmap &&
            hwloc_bitmap_list_asprintf(&list, static_cast<hwloc_const_bitmap_t>(c.bitmap)) >= 0) {
            emit(list);
            std::free(list);
        } else {
            emit("<no bitmap>");
        }
    }
    void buffer(pmix_data_buffer_t &b) {
        emit("<" + std::to_string(b.bytes_used) + " bytes, " +
             std::to_string(b.unpack_ptr && b.base_ptr ? b.unpack_ptr - b.base_ptr : 0) + " read>");
    }

    std::string take() { return std::move(out_); }

  private:
    void emit(const std::string &text) {
        if (!first_ && !glue_) out_ += ", ";
        if (glue_) out_ += ' ';
        first_ = false;
        glue_ = false;
        out_ += text;
    }
    void open(char c) {
        emit(std::string(1, c));
        first_ = true;
    }
    void close(char c) {
        out_ += c;
        first_ = false;
    }
    std::string out_;
    bool first_ = true;
    bool glue_ = false;
};

}  // namespace

void destruct(pmix_data_type_t t, void *elems, std::size_t n) noexcept {
    std::size_t es = element_size(t);
    if (es == 0 || elems == nullptr) return;
    Destroyer d;
    for (std::size_t i = 0; i < n; ++i) visit_typed(d, t, static_cast<char *>(elems) + i * es);
    std::memset(elems, 0, n * es);
}

std::string print(pmix_data_type_t t, const void *elem) {
    Printer p;
    if (elem == nullptr) return "NULL";
    visit_typed(p, t, const_cast<void *>(elem));
    return p.take();
}

}  // namespace pmixpp::wire
