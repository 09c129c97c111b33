// Crash injection for kill tests: named points in the checkpoint write
// protocol (and the server's overlapped evaluation,
// "round.overlapped_evaluation") where a test run may SIGKILL its own
// process, so a harness can be sure that some kills land at those moments.
//
// Off unless the environment variable FEDBERRY_KILL_POINTS is set, e.g.
// "ckpt.*:0.05" (every point whose name starts with "ckpt.", with
// probability 0.05 each time it is reached) or "ckpt.before_rename:1".
// Thread-safe.
#ifndef FEDBERRY_CHECKPOINT_KILL_POINT_H_
#define FEDBERRY_CHECKPOINT_KILL_POINT_H_

namespace fedberry::checkpoint {

// Kills the process with SIGKILL if `name` is armed and the dice say so.
void KillPoint(const char* name);

}  // namespace fedberry::checkpoint

#endif  // FEDBERRY_CHECKPOINT_KILL_POINT_H_
