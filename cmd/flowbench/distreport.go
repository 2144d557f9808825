package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	natsjs "github.com/flowstate/flowstate/runtime/connectors/jetstream"
)

// distTargetFigure names issue 27's target in the targets table.
const distTargetFigure = "word count stream to stream, distributed mode on 1 runner / one runner, words/s"

// serverExtra is the nats-server CPU us per word distributed mode on 1 runner adds to the
// single runner's, round by round.
func (r *distResult) serverExtra() []float64 {
	d1, single := r.runs["d1"], r.runs["single"]
	var out []float64
	for i := range min(len(d1.words), len(single.words)) {
		out = append(out, d1.cpu[kindServer][i]-single.cpu[kindServer][i])
	}
	return out
}

func (r *report) renderDistributed(w io.Writer) {
	x := r.distributed
	if x == nil {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("### Distributed mode: the word count on 1, 2 and 3 runners (issue 27)\n\n")
	p("Measured %s in %s (`flowbench -only distributed` runs this phase alone), load average %s at its start and %s at its end. **The machine is shared:** its %d cores run every process of a run (the runners, their plugins, nats-server) and other developers' work at the same time, so 2 and 3 runners here share the same cores as 1: their figures show what distributed mode costs, not how it scales out on machines of their own (see docs/architecture.md, \"Distributed mode: the model on paper\").\n\n",
		x.started.UTC().Format("2006-01-02 15:04 MST"), x.elapsed.Round(time.Second), x.loadStart, x.loadEnd, r.machine.CPUs)
	p("One nats-server %s node the phase starts (as the JetStream phase does: file storage in the work directory, no replicas). The input is the word count's generated text (%s: %s lines, %s words, %s distinct), one message per line, line i on subject `in.<i mod %d>` of stream `%s`, published once; the source hands those subjects to its subtasks (tasks, in distributed mode) so that at parallelism %d each reads %s lines. Every run is real `bin/runner run` processes with their plugin processes, all with one configuration: the `wordcount` job, `job.parallelism: %d`, the hashmap backend, fsstorage on one `file://` directory, checkpoints every %s, no restart, the JetStream source on `%s` (`source.jetstream.bounded: true`) and the exactly-once JetStream sink onto `%s` (subject `%s`, the stream created anew for each run); the distributed variants add `cluster.enabled: true` and `cluster.kv-bucket: %s` and start 1, 2 or 3 runners together. Each run has a job name of its own, so its tasks' leases and its repartition stream (`flowstate-<job>`) are new. With a bounded input the distributed job ends: every runner exits once every task has finished, and every run here ended so.\n\n",
		x.server, bytesHuman(x.inputBytes), human(float64(x.lines)), human(float64(x.words)), human(float64(x.distinct)), distSubjects, distInputStream,
		x.parallelism, sharesText(x.shares[x.parallelism]), x.parallelism, distCheckpointInterval, distInputStream, distOutputStream, distOutSubject, distBucket)
	p("Each run's output is read back and checked by `internal/wordcheck`, which counts the input itself: every word's running counts 1..N once each, N its count, nothing else, and as many records as input words. Words/s is the input's words over the time from the first `%s` line of any runner to the exit of the last (start-up before it not counted; the final checkpoint, the commits and, in distributed mode, the runners noticing that every task has finished, counted); \"in all\" is from starting the first runner to the last exit. CPU is user+system time per word: of each runner process (what wait4 reports for it less its plugins'), of its plugin processes (sampled from /proc every %s until they exit, so a plugin's last %s is counted as its runner's), each over its whole life, start-up included, and of nats-server from the start of the runners to the last exit. The variants run in every round in an order that turns by one each round; figures are medians over %d rounds, ratios the median of the rounds' own ratios to the single runner of the same round.\n\n",
		firstRecordLine, distSample, distSample, x.rounds)
	p("| variant | words/s | worst round | / one runner | worst round | words/s to the complete output | / one runner | complete output to last exit, s | in all, s |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, v := range distVariants {
		d := x.runs[v.key]
		rel, worst, out := "1.00x", "", "1.00x"
		if v.key != "single" {
			rel, worst, out = fmt.Sprintf("%.2fx", x.ratio(v.key)), fmt.Sprintf("%.2fx", x.worst(v.key)), fmt.Sprintf("%.2fx", x.outputRatio(v.key))
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f |\n", v.name, human(median(d.words)), human(minOf(d.words)), rel, worst,
			human(median(d.output)), out, median(d.tail), median(d.wall))
	}
	p("\n| variant | CPU us/word: runners | hashmap plugins | fsstorage plugins | nats-server | all | each runner, in start order |\n|---|---|---|---|---|---|---|\n")
	for _, v := range distVariants {
		d := x.runs[v.key]
		p("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %s |\n", v.name, median(d.cpu[kindRunner]), median(d.cpu[kindBackend]), median(d.cpu[kindStorage]),
			median(d.cpu[kindServer]), d.cpuTotal(), perRunnerText(d.perRunner))
	}
	p("\n")
	v := x.ratio("d1")
	p("Target (issue 27, item 7): distributed mode on 1 runner at least %.1fx the single runner's words/s: %.2fx (worst round %.2fx), %s.\n\n", distGoal, v, x.worst("d1"), atLeast(v, distGoal, "").verdict())
	p("The repartition stream of each distributed run at its end (its state: payloads, subjects, headers and the store's own bytes per message), per input word; frames are its data messages, each many records packed (up to %d KiB), the other messages the writers' markers and end frames:\n\n", natsjs.DefaultFrameBytes>>10)
	p("| variant | bytes/word | of which frames' payload | messages/word | frames/word |\n|---|---|---|---|---|\n")
	for _, v := range distVariants[1:] {
		d := x.runs[v.key]
		p("| %s | %.2f | %.2f | %.5f | %.5f |\n", v.name, median(d.repBytes), median(d.payload), median(d.repMsgs), median(d.frames))
	}
	extra := x.serverExtra()
	p("\nA frame's payload is %s on average (last distributed run), with %.2f other messages per frame. nats-server's CPU per word on 1 runner less the single runner's, which holds what the repartition stream, the group's KV traffic and six tasks' consumers and writers (instead of one job's) cost the server: %.2f us/word, the median of the rounds' differences (%s).\n\n",
		bytesHuman(int64(x.frameBytes)), x.markers, median(extra), floats(extra, "%.2f"))
	p("Raw frames, in each round after the variants: nats.go alone (`PublishAsync`, nats.go's default window) publishes %s in messages of %d KiB of random bytes (a full frame) on stream `%s` of the same server, and an ordered consumer reads them back, checked by count and bytes: the server's cost per byte of the repartition stream's traffic, which the JetStream phase's small messages do not show.\n\n", bytesHuman(x.rawBytes), distFrameSize>>10, distFrameStream)
	p("| raw frames | publish MB/s | read back MB/s | nats-server CPU us/kB, published and read back | nats.go CPU us/kB |\n|---|---|---|---|---|\n")
	p("| median | %.0f | %.0f | %.3f | %.3f |\n\n", median(x.raw.publish), median(x.raw.consume), median(x.raw.serverCPU), median(x.raw.clientCPU))
}

// sharesText lists the lines of each source subtask.
func sharesText(shares []int64) string {
	parts := make([]string, len(shares))
	for i, n := range shares {
		parts[i] = human(float64(n))
	}
	return strings.Join(parts, ", ")
}

// perRunnerText lists the median over the rounds of each runner's CPU us per word.
func perRunnerText(rounds [][]float64) string {
	if len(rounds) == 0 {
		return ""
	}
	var parts []string
	for i := range rounds[0] {
		var xs []float64
		for _, r := range rounds {
			if i < len(r) {
				xs = append(xs, r[i])
			}
		}
		parts = append(parts, fmt.Sprintf("%.2f", median(xs)))
	}
	return strings.Join(parts, ", ")
}
