#pragma once
// fulfillsyncd's exit statuses: what each command, and `once`, end with.
namespace fulfillsync::daemon {

// sysexits(3), which systemd units and scripts understand.
namespace exit_code {
inline constexpr int ok = 0;
// `status` answers as `systemctl status` and LSB init scripts do.
inline constexpr int status_failing = 1;      // a daemon runs, but a job is failing or paused
inline constexpr int status_not_running = 3;  // no daemon runs on the checkpoint store
inline constexpr int usage = 64;        // EX_USAGE
inline constexpr int data_error = 65;   // EX_DATAERR: rows stay rejected, or tracking marks refused (once)
inline constexpr int unavailable = 69;  // EX_UNAVAILABLE: a store or service could not be opened
inline constexpr int software = 70;     // EX_SOFTWARE: an internal error
inline constexpr int io_error = 74;     // EX_IOERR: the checkpoint store is damaged (recover-store)
inline constexpr int temporary_failure = 75;  // EX_TEMPFAIL: work is left (once); try again later
inline constexpr int config = 78;       // EX_CONFIG
}  // namespace exit_code

}  // namespace fulfillsync::daemon
