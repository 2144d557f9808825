package cluster

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// join makes a member of the test job's group in this process.
func join(t *testing.T, js jetstream.JetStream) *Group {
	t.Helper()
	g, err := Join(context.Background(), Settings{JS: js, Bucket: testBucket, Job: testJob, Tasks: testTasks, TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Leave(context.Background()) })
	return g
}

// claimAll balances g until it holds every task (it is the only member).
func claimAll(t *testing.T, g *Group) {
	t.Helper()
	if _, err := g.Balance(context.Background()); err != nil {
		t.Fatal(err)
	}
	if held := g.Held(); len(held) != len(testTasks) {
		t.Fatalf("a lone member holds %v, want every task", held)
	}
}

// TestARequestIsServedPerTaskAndFinishedOnce: a request submitted without membership is
// open until it is finished; every task reports once (the first report stands), the
// first outcome stands, and the submitter's wait gets it.
func TestARequestIsServedPerTaskAndFinishedOnce(t *testing.T) {
	_, js, _ := bucket(t)
	ctx := context.Background()
	if _, err := Submit(ctx, js, testBucket, testJob, Request{Kind: RequestSavepoint}); err == nil || !strings.Contains(err.Error(), "no group") {
		t.Fatalf("a request to a job no runner has joined: %v, want it refused naming that", err)
	}
	g := join(t, js)
	claimAll(t, g)
	if !g.Finisher() {
		t.Fatal("the member holding the first task is not the finisher")
	}
	id, err := Submit(ctx, js, testBucket, testJob, Request{Kind: RequestStop, Savepoint: true, Target: "/sp"})
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := g.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 1 || reqs[0].ID != id || !reqs[0].Savepoints() || reqs[0].Target != "/sp" {
		t.Fatalf("open requests %+v, want the stop with savepoint %s", reqs, id)
	}
	for i, task := range testTasks {
		if err := g.Report(ctx, id, task, TaskResult{Pointer: "p" + task}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := g.Report(ctx, id, task, TaskResult{Err: "late"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err := g.Results(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(testTasks) || res[testTasks[0]].Pointer != "p"+testTasks[0] || res[testTasks[0]].Err != "" {
		t.Fatalf("results %+v: want one per task, the first report of each", res)
	}
	waited := make(chan Outcome, 1)
	go func() {
		o, err := Await(ctx, js, testBucket, testJob, id)
		if err != nil {
			t.Error(err)
		}
		waited <- o
	}()
	if o, err := g.Finish(ctx, id, Outcome{Manifest: "m1"}); err != nil || o.Manifest != "m1" {
		t.Fatalf("first finish: %+v, %v", o, err)
	}
	if o, err := g.Finish(ctx, id, Outcome{Err: "second"}); err != nil || o.Manifest != "m1" || o.Err != "" {
		t.Fatalf("a second finish gave %+v, %v: the first outcome must stand", o, err)
	}
	if o := <-waited; o.Manifest != "m1" {
		t.Fatalf("the submitter waited for %+v, want manifest m1", o)
	}
	if reqs, err := g.Requests(ctx); err != nil || len(reqs) != 0 {
		t.Fatalf("open requests after the finish: %+v, %v", reqs, err)
	}
}

// TestTheViewShowsMembersTasksAndStatus: the view read without membership shows the live
// member, who holds each task, and what the member published of it.
func TestTheViewShowsMembersTasksAndStatus(t *testing.T) {
	_, js, _ := bucket(t)
	ctx := context.Background()
	g := join(t, js)
	claimAll(t, g)
	if err := g.Publish(ctx, MemberStatus{Tasks: []TaskStatus{{Task: testTasks[2], State: TaskRunning, Lag: 7,
		LastCheckpoint: &CheckpointStatus{ID: 3, Pointer: "chk-3"}}}}); err != nil {
		t.Fatal(err)
	}
	v, err := ReadView(ctx, js, testBucket, testJob)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Members) != 1 || v.Members[0].ID != g.ID() || v.Members[0].Status.Member != g.ID() {
		t.Fatalf("view members %+v, want member %s with its status", v.Members, g.ID())
	}
	if len(v.Tasks) != len(testTasks) {
		t.Fatalf("the view has %d tasks, want %d", len(v.Tasks), len(testTasks))
	}
	for _, tv := range v.Tasks {
		if tv.Member != g.ID() || tv.Epoch < 1 {
			t.Errorf("task %s held by %q at epoch %d, want %s", tv.Task, tv.Member, tv.Epoch, g.ID())
		}
		if tv.Task == testTasks[2] && (tv.Status == nil || tv.Status.Lag != 7 || tv.Status.LastCheckpoint.Pointer != "chk-3") {
			t.Errorf("task %s status %+v, want what the member published", tv.Task, tv.Status)
		}
	}
	if _, err := ReadView(ctx, js, testBucket, "other"); err == nil || !strings.Contains(err.Error(), `job "other" has no group`) {
		t.Fatalf("the view of a job no runner joined: %v", err)
	}
}

// TestOriginIsSetOnceAndGuardsARunningJob: the origin records every task's epoch; a
// runner started from the same savepoint joins it, and one started from another savepoint
// is refused while the job runs, naming the savepoint it runs from.
func TestOriginIsSetOnceAndGuardsARunningJob(t *testing.T) {
	_, js, _ := bucket(t)
	ctx := context.Background()
	pointers := func(sp string) map[string]string {
		m := map[string]string{}
		for _, task := range testTasks {
			m[task] = sp + "/" + task
		}
		return m
	}
	a := join(t, js)
	if err := a.SetOrigin(ctx, "sp1", map[string]string{testTasks[0]: "x"}); err == nil || !strings.Contains(err.Error(), "no savepoint of task") {
		t.Fatalf("an origin without every task: %v", err)
	}
	if err := a.SetOrigin(ctx, "sp1", pointers("sp1")); err != nil {
		t.Fatal(err)
	}
	o, err := a.Origin(ctx)
	if err != nil || o == nil || o.Manifest != "sp1" || o.Tasks[testTasks[1]].Pointer != "sp1/"+testTasks[1] {
		t.Fatalf("origin %+v, %v", o, err)
	}
	claimAll(t, a)
	b := join(t, js)
	if err := b.SetOrigin(ctx, "sp1", pointers("sp1")); err != nil {
		t.Fatalf("a runner started from the savepoint the job runs from: %v", err)
	}
	err = b.SetOrigin(ctx, "sp2", pointers("sp2"))
	if err == nil || !strings.Contains(err.Error(), "from savepoint sp1") || !strings.Contains(err.Error(), "runner stop") {
		t.Fatalf("a runner started from another savepoint while the job runs: %v", err)
	}
	// The tasks' epochs the origin recorded are below those of a claim after it.
	for _, task := range testTasks {
		l, _ := a.Lease(task)
		if l.Record().Epoch <= o.Tasks[task].Epoch {
			t.Errorf("task %s claimed at epoch %d after the origin recorded epoch %d", task, l.Record().Epoch, o.Tasks[task].Epoch)
		}
	}
}
