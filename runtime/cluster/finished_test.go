package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/flowstate/flowstate/internal/testwait"
)

// TestFinishedTasksAreNotClaimedAgain: a task its holder marked finished stays finished
// after the holder leaves (no member claims it, the view shows it FINISHED); the marks
// hold while any member is live, and a member that joins a group with no other live
// member starts a new run: the marks are cleared and every task claimed again.
func TestFinishedTasksAreNotClaimedAgain(t *testing.T) {
	_, js, _ := bucket(t)
	ctx := context.Background()
	a := join(t, js)
	claimAll(t, a)
	for _, task := range testTasks[:2] {
		if err := a.MarkFinished(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.MarkFinished(ctx, "t9"); err == nil {
		t.Fatal("a member marked finished a task it does not hold")
	}
	b := join(t, js) // a is live: the marks stay
	if err := a.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Balance(ctx); err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, task := range b.Held() {
		held[task] = true
	}
	for i, task := range testTasks {
		if finished := i < 2; held[task] == finished {
			t.Errorf("task %s: held %v by the member left alone, finished %v", task, held[task], finished)
		}
	}
	done, err := b.Finished(ctx)
	if err != nil || len(done) != 2 || !done["t0"] || !done["t1"] {
		t.Fatalf("finished %v, %v; want t0 and t1", done, err)
	}
	v, err := b.View(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := v.Tasks[0].Status; v.Tasks[0].Member != "" || s == nil || s.State != TaskFinished {
		t.Fatalf("the view of finished task t0 no member holds: %+v, %+v", v.Tasks[0], s)
	}
	if err := b.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	c := join(t, js) // alone: a new run of the job
	if done, err := c.Finished(ctx); err != nil || len(done) != 0 {
		t.Fatalf("finished %v, %v after a member joined an empty group; want none", done, err)
	}
	claimAll(t, c)
}

// TestASettlingMemberClaimsNothing: within Settings.Settle of joining, a member claims
// nothing; after it, its share.
func TestASettlingMemberClaimsNothing(t *testing.T) {
	_, js, _ := bucket(t)
	ctx := context.Background()
	settle := 500 * time.Millisecond
	g, err := Join(ctx, Settings{JS: js, Bucket: testBucket, Job: testJob, Tasks: testTasks, TTL: 5 * time.Second, Settle: settle})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Leave(ctx)
	joined := time.Now()
	plan, err := g.Balance(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(joined) < settle && len(plan.Claimed) > 0 {
		t.Fatalf("a member within its settle time claimed %v", plan.Claimed)
	}
	testwait.For(t, "the lone member's claims after its settle time", time.Minute, func() error {
		if _, err := g.Balance(ctx); err != nil {
			return testwait.Stop(err)
		}
		if held := g.Held(); len(held) < len(testTasks) {
			return fmt.Errorf("it holds %v", held)
		}
		return nil
	})
}
