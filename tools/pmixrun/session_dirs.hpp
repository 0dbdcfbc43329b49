// The temporary directories pmixrun gives each job (the standard's
// PMIX_TMPDIR, PMIX_NSDIR and PMIX_PROCDIR, with PMIX_TDIR_RMCLEAN: pmixrun
// removes what it made):
//
//   <$TMPDIR or /tmp>/pmixrun.<pid>.XXXXXX   the session (PMIX_TMPDIR), made at first use
//     <nspace>/                              a job (PMIX_NSDIR)
//       <rank>/                              a process of it (PMIX_PROCDIR)
//
// Each is mode 0700, owned by pmixrun's user (its ranks run as that user). A
// job's tree goes when the job is deregistered (Launcher::deregister_all),
// with whatever the processes left in it; the session directory goes when
// pmixrun exits (also after a signal: main returns). Main thread only.
#pragma once

#include <cstdint>
#include <string>

namespace pmixrun {

// The session directory; empty (and a message on stderr, once) when it
// cannot be made: then jobs get none of the three keys.
const std::string &session_dir();

// Makes `<session>/<nspace>` and its rank folders 0..nprocs-1 and returns
// the job's path; empty (with a message on stderr) on failure, having
// removed what it made.
std::string make_job_dirs(const std::string &nspace, std::uint32_t nprocs);

// The folder of `rank` in a job's path from make_job_dirs.
std::string proc_dir(const std::string &job_dir, std::uint32_t rank);

// Removes `<session>/<nspace>` and everything in it (nothing if absent).
void remove_job_dirs(const std::string &nspace);

}  // namespace pmixrun
