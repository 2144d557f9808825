package explain

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/flowstate/flowstate/runtime/config"
)

// explainConnectors says what the built-in job reads and writes, and what it means for
// durability.
func (e *Explanation) explainConnectors(c *config.Config) {
	switch c.Job.Source {
	case config.ConnectorJetStream:
		s := c.JetStreamSource
		subjects := "every subject"
		if len(s.Subjects) > 0 {
			subjects = "subjects " + strings.Join(s.Subjects, ", ")
		}
		start := s.StartupMode
		switch s.StartupMode {
		case config.StartupTimestamp:
			start += " " + s.StartupTime.UTC().Format("2006-01-02T15:04:05Z07:00")
		case config.StartupSequence:
			start += fmt.Sprint(" ", s.StartupSequence)
		}
		bound := "unbounded: it reads for as long as the job runs, and looks for new subjects every " + s.DiscoveryInterval.String()
		if s.Bounded {
			bound = "bounded: each run stops at the stream's last sequence when it starts"
		}
		e.Source = fmt.Sprintf("JetStream stream %s on %s (%s), from %s when no checkpoint is restored; %s. "+
			"Each subject's position (the last stream sequence done, with the stream's creation time) is in the checkpoints, "+
			"and a restore reads on from there with ordered consumers, never from acknowledgements: the stream's retention must keep "+
			"messages until a checkpoint past them completes, and a restore that needs dropped messages %s.",
			s.Stream, natsText(c.NATS), subjects, start, bound, gapText(s.OnRetentionGap))
	default:
		e.Source = fmt.Sprintf("Text files at %s (%s), read exactly once: the split positions are in the checkpoints.", orUnset(c.Job.Input), config.KeyJobInput)
	}
	switch c.Job.Sink {
	case config.ConnectorJetStream:
		s := c.JetStreamSink
		e.Sink = fmt.Sprintf("JetStream stream %s on %s, subject %s, exactly once with no time bound: the records of a checkpoint interval are kept "+
			"in that checkpoint and published when it completes, as atomic batches of at most %d messages, each closed by a marker on %s.<job>.<subtask> "+
			"whose expected last sequence the server checks, so a commit done before a crash is not done again and an older runner's commit is refused. "+
			"The stream must allow atomic publish and keep the markers (no max age or message limits on %s.>); the output appears once per checkpoint.",
			s.Stream, natsText(c.NATS), s.Subject, s.BatchSize, s.MarkerSubject, s.MarkerSubject)
	default:
		e.Sink = fmt.Sprintf("Part files in %s (%s), exactly once: each checkpoint's files are committed when it completes.", orUnset(c.Job.Output), config.KeyJobOutput)
	}
}

// explainRunners says who runs the job: this runner alone, or its group in distributed mode.
func (e *Explanation) explainRunners(c *config.Config) {
	if !c.Cluster.Enabled {
		e.Runners = fmt.Sprintf("This runner alone (%s: false); a second runner of the job is refused while this one holds its lease.", config.KeyClusterEnabled)
		return
	}
	e.Runners = fmt.Sprintf("Every runner started with this configuration, on any machine (distributed mode, %s): they meet on NATS (%s) "+
		"in KV bucket %s, which must exist with %d replica(s), and run the job as tasks, %d per sub-topology (the job cut at each keyBy), "+
		"each claimed by one runner under its own lease; the keyed exchanges between sub-topologies go through JetStream stream %s "+
		"(created with %d replica(s) if missing). Each task keeps its own checkpoints in the checkpoint storage, as job %s.<task>, "+
		"and a runner killed or cut off has its tasks restored from them by the others once their leases expire (%s).",
		config.KeyClusterEnabled, natsText(c.NATS), c.Cluster.Bucket, c.Cluster.Replicas, c.Job.Parallelism,
		c.Cluster.StreamFor(c.Job.Name), c.Cluster.Replicas, c.Job.Name, config.KeyLeaseTimeout)
}

func orUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

func gapText(on string) string {
	if on == config.OnErrorSkip {
		return "skips what is gone and says so (" + config.KeySourceOnGap + ": skip)"
	}
	return "is refused, naming the subjects (" + config.KeySourceOnGap + ": fail)"
}

// natsText says where NATS is and how the runner logs in, without a secret.
func natsText(n config.NATS) string {
	servers := make([]string, len(n.Servers))
	for i, s := range n.Servers {
		servers[i] = s
		if u, err := url.Parse(s); err == nil && u.User != nil {
			u.User = url.User("xxxxx")
			servers[i] = u.String()
		}
	}
	t := strings.Join(servers, ",")
	switch {
	case n.User != "":
		t += fmt.Sprintf(" as user %q with a password", n.User)
	case n.Token != "":
		t += " with a token"
	case n.NKeyFile != "":
		t += " with the nkey of " + n.NKeyFile
	case n.CredsFile != "":
		t += " with the credentials of " + n.CredsFile
	}
	if n.CAFile != "" || n.CertFile != "" {
		t += " over TLS"
	}
	return t
}
