// Package cluster lets runners on any machines run one job together, Kafka Streams'
// way (issue 27): the job's work is cut into tasks, and each runner is a member of the
// job's group and claims its fair share of the tasks. Both are leases of package
// ownership on keys of one replicated NATS KV bucket (jetstream.KVLease), so the bucket's
// compare-and-swap decides every claim and no cluster manager of ours is involved:
//
//   - a member's lease, on key <job>.member.<id>, says the runner lives; a runner killed
//     or cut off stops renewing it, and it expires after the lease timeout;
//   - a task's lease, on key <job>.task.<task>, says which member runs the task; its
//     revision is the task's fencing token (its checkpoints and sink markers carry it);
//   - Balance, called by each member on an interval, claims free tasks (released,
//     expired, or held by a member known to have ended) until the member holds its fair
//     share, and names the tasks it holds beyond it, which it hands over once it has
//     checkpointed them (Release), so that a member that joins gets its share.
//
// One job: the first member records the settings every member must share (the task
// list, and Settings.Agree: the job's graph, its partition count, its checkpoint storage)
// on key <job>.config, and a runner whose settings differ is refused at Join, naming each.
//
// Clocks: members judge leases expired by their own clocks, so Join compares the
// member's with the NATS server's (the time the server stored its member record) and
// refuses one off by more than half the leases' margin, naming the skew.
//
// Fair shares: with T tasks and M live members, every member may hold up to ceil(T/M)
// tasks; a member holding more than floor(T/M) hands one over while another member holds
// fewer than floor(T/M). A member counts while it renews its record, and not once its
// process is known gone: a killed member's tasks are claimed at once on its machine, and
// a frozen one stops counting after two renewal periods, so nobody hands tasks over to a
// member that cannot claim them. Claims go through compare-and-swap, so a task is never
// claimed by two members; a member frozen past its timeout is fenced by its task leases'
// Check.
//
// It owns the group's keys and the balancing rule, on the KV lease of
// runtime/connectors/jetstream and the leases of runtime/ownership. It must never import
// the engine (runtime/dataflow), the plugin host, the session, the monitor or the runner
// (internal/deps checks it): the runner asks it which tasks to run and runs them.
//
// Beside the leases, the bucket carries what the whole job shares: its savepoint and stop
// requests and each task's outcome (Submit, Report, Finish), every member's status (Publish,
// View, ReadView for runner status), the tasks marked finished (MarkFinished), and the
// origin of a run restored from a manifest (SetOrigin). runtime/runner's Distributed runs
// a member; dataflow.Job.Cut cuts the job into its tasks.
package cluster
