// Which faces of the library this process has initialized, and how often.
// PMIx_Init/Finalize nest (OPENMPI-CONTRACT rule 9), so each face keeps a
// reference count; the API layer asks here before doing anything that needs a
// live runtime and answers PMIX_ERR_INIT otherwise.
#pragma once

namespace pmixpp::runtime {

enum class Face { client, server, tool };

// True while at least one PMIx_*_init of any face is outstanding.
bool any_face_initialized() noexcept;
// Reference count of one face (0 = not initialized).
int init_count(Face face) noexcept;

// Written only by the faces' init/finalize entry points (under their own
// init mutex). Each returns the count after the change; drop_init never goes
// below 0.
int add_init(Face face) noexcept;
int drop_init(Face face) noexcept;

}  // namespace pmixpp::runtime
