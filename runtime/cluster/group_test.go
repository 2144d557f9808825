package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/natstest"
	"github.com/flowstate/flowstate/internal/testwait"
	"github.com/flowstate/flowstate/runtime/ownership"
)

// A member process: the test binary run with these variables set joins the group and
// balances until its stdin closes, then leaves.
const (
	envChild = "FLOWSTATE_CLUSTER_TEST_MEMBER"
	envURL   = "FLOWSTATE_CLUSTER_TEST_URL"
	envTTL   = "FLOWSTATE_CLUSTER_TEST_TTL"
)

const (
	testBucket = "groups"
	testJob    = "wc"
	testTTL    = 1500 * time.Millisecond
)

var testTasks = []string{"t0", "t1", "t2", "t3", "t4", "t5"}

func TestMain(m *testing.M) {
	if os.Getenv(envChild) != "" {
		ttl, err := time.ParseDuration(os.Getenv(envTTL))
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		os.Exit(member(os.Getenv(envURL), ttl))
	}
	os.Exit(m.Run())
}

// member runs one member: it balances every tenth of the lease timeout, hands over at
// once what it is asked to (its tasks do no work to checkpoint), and prints its id and
// then each change of the tasks it holds.
func member(url string, ttl time.Duration) int {
	ctx := context.Background()
	nc, err := nats.Connect(url)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	g, err := Join(ctx, Settings{JS: js, Bucket: testBucket, Job: testJob, Tasks: testTasks, TTL: ttl})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("member", g.ID())
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
	tick := time.NewTicker(min(ttl/10, 150*time.Millisecond))
	defer tick.Stop()
	last := ""
	for {
		select {
		case <-done:
			if err := g.Leave(ctx); err != nil {
				fmt.Println("error:", err)
				return 1
			}
			return 0
		case <-tick.C:
		}
		plan, err := g.Balance(ctx)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		for _, t := range plan.HandOver {
			if err := g.Release(ctx, t); err != nil {
				fmt.Println("error:", err)
			}
		}
		for _, t := range g.Held() {
			if l, ok := g.Lease(t); ok && l.Check() != nil {
				fmt.Println("fenced", t) // what a task would commit now is refused
			}
		}
		if held := strings.Join(g.Held(), ","); held != last {
			fmt.Println("held", held)
			last = held
		}
	}
}

// proc is a member process of a test.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	id    chan string
	out   *testwait.Buffer
}

func startMember(t *testing.T, url string) *proc {
	t.Helper()
	return startMemberTTL(t, url, testTTL)
}

func startMemberTTL(t *testing.T, url string, ttl time.Duration) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"=1", envURL+"="+url, envTTL+"="+ttl.String())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stdin: stdin, id: make(chan string, 1), out: &testwait.Buffer{}}
	cmd.Stderr = p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(p.out, sc.Text())
			if id, ok := strings.CutPrefix(sc.Text(), "member "); ok {
				p.id <- id
			}
		}
	}()
	select {
	case id := <-p.id:
		p.id <- id
	case <-time.After(30 * time.Second):
		t.Fatalf("member process did not join; its output:\n%s", p.out)
	}
	return p
}

func (p *proc) ID() string { id := <-p.id; p.id <- id; return id }

// holders reads every task's record from the bucket, as the checker sees it: the member
// holding each task whose record is live, and each record's epoch.
func holders(ctx context.Context, kv jetstream.KeyValue) (map[string]string, map[string]int64, error) {
	owner, epoch := map[string]string{}, map[string]int64{}
	for _, task := range testTasks {
		e, err := kv.Get(ctx, testJob+".task."+task)
		if err == jetstream.ErrKeyNotFound {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		rec, err := ownership.DecodeRecord(e.Value())
		if err != nil {
			return nil, nil, fmt.Errorf("task %s: %w", task, err)
		}
		epoch[task] = rec.Epoch
		if rec.Live(time.Now()) {
			owner[task] = rec.Member
		}
	}
	return owner, epoch, nil
}

// balanced reports why the tasks are not held each by one of members, their counts
// within floor and ceil of the fair share.
func balanced(owner map[string]string, members ...string) error {
	counts := map[string]int{}
	for _, task := range testTasks {
		m, ok := owner[task]
		if !ok {
			return fmt.Errorf("task %s is held by no one (%v)", task, owner)
		}
		if !slices.Contains(members, m) {
			return fmt.Errorf("task %s is held by %s, not one of the members %v", task, m, members)
		}
		counts[m]++
	}
	floor, ceil := len(testTasks)/len(members), (len(testTasks)+len(members)-1)/len(members)
	for _, m := range members {
		if counts[m] < floor || counts[m] > ceil {
			return fmt.Errorf("member %s holds %d tasks, want %d to %d (%v)", m, counts[m], floor, ceil, owner)
		}
	}
	return nil
}

// bucket starts a NATS server and creates the group's bucket on it.
func bucket(t *testing.T) (*natstest.Cluster, jetstream.JetStream, jetstream.KeyValue) {
	t.Helper()
	c := natstest.StartServer(t, natstest.Options{})
	js := c.JetStream(t)
	kv, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: testBucket})
	if err != nil {
		t.Fatal(err)
	}
	return c, js, kv
}

// waitBalanced waits until the bucket shows the tasks balanced over members.
func waitBalanced(t *testing.T, kv jetstream.KeyValue, what string, members ...*proc) {
	t.Helper()
	ids := make([]string, len(members))
	for i, p := range members {
		ids[i] = p.ID()
	}
	testwait.For(t, what, 30*time.Second, func() error {
		owner, _, err := holders(context.Background(), kv)
		if err != nil {
			return err
		}
		return balanced(owner, ids...)
	})
}

// TestGroupBalancesOverRealMemberProcesses: three member processes share six tasks two
// each; one killed with -9 has its tasks claimed by the other two once its leases expire,
// at the next epoch; a fourth that joins gets its share from members handing over; and
// members that leave release every task. The checker reads the bucket itself.
func TestGroupBalancesOverRealMemberProcesses(t *testing.T) {
	c, _, kv := bucket(t)
	ctx := context.Background()
	wait := func(what string, members ...*proc) { t.Helper(); waitBalanced(t, kv, what, members...) }
	ps := []*proc{startMember(t, c.URL()), startMember(t, c.URL()), startMember(t, c.URL())}
	wait("six tasks over three members", ps...)
	_, before, err := holders(ctx, kv)
	if err != nil {
		t.Fatal(err)
	}
	owner, _, _ := holders(ctx, kv)
	victim := ps[0]
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	victim.cmd.Wait()
	wait("the tasks of the killed member claimed by the other two", ps[1], ps[2])
	_, after, err := holders(ctx, kv)
	if err != nil {
		t.Fatal(err)
	}
	for task, m := range owner {
		if m == victim.ID() && after[task] != before[task]+1 {
			t.Errorf("task %s of the killed member: epoch %d after the takeover, want %d", task, after[task], before[task]+1)
		}
	}
	fourth := startMember(t, c.URL())
	wait("six tasks over three members again, the new one among them", ps[1], ps[2], fourth)
	for _, p := range []*proc{ps[1], ps[2], fourth} {
		p.stdin.Close()
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("member %s leaving: %v; its output:\n%s", p.ID(), err, p.out)
		}
	}
	owner, _, err = holders(ctx, kv)
	if err != nil || len(owner) != 0 {
		t.Fatalf("after every member left: %v held (%v), want none", owner, err)
	}
	if s := ps[1].out.String() + ps[2].out.String() + fourth.out.String(); strings.Contains(s, "error:") {
		t.Errorf("a member reported an error:\n%s", s)
	}
}

// TestJoinRefusesBadSettings: each setting that cannot work is refused by name before the
// member joins.
func TestJoinRefusesBadSettings(t *testing.T) {
	_, js, _ := bucket(t)
	ctx := context.Background()
	good := Settings{JS: js, Bucket: testBucket, Job: testJob, Tasks: testTasks, TTL: testTTL}
	for _, c := range []struct {
		change func(*Settings)
		want   string
	}{
		{func(s *Settings) { s.Job = "a.b" }, "one KV key token"},
		{func(s *Settings) { s.Tasks = nil }, "no tasks"},
		{func(s *Settings) { s.Tasks = []string{"t0", "t0"} }, `task "t0" is listed twice`},
		{func(s *Settings) { s.TTL = 0 }, "must be positive"},
		{func(s *Settings) { s.Bucket = "missing" }, "KV bucket missing does not exist"},
		{func(s *Settings) { s.Replicas = 3 }, "has 1 replicas, the configuration asks for 3"},
		{func(s *Settings) { s.Tasks = []string{"a task"} }, "not a valid key"},
	} {
		s := good
		c.change(&s)
		if _, err := Join(ctx, s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("join with %+v: %v, want an error naming %q", s, err, c.want)
		}
	}
	good.Agree = map[string]string{"graph": "source>wordcount>sink", "storage": "fsstorage s3://b/ck"}
	g, err := Join(ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	// The first member recorded the job's settings; a runner whose own differ is refused,
	// naming each setting that differs, and one with the same joins.
	for _, c := range []struct {
		change func(*Settings)
		want   []string
	}{
		{func(s *Settings) {
			s.Agree = map[string]string{"graph": "source>sink", "storage": "fsstorage s3://b/ck"}
		}, []string{`graph is "source>sink" here, "source>wordcount>sink" in the group`}},
		{func(s *Settings) { s.Tasks = testTasks[:4] }, []string{`tasks is "t0,t1,t2,t3" here`}},
		{func(s *Settings) { s.Agree = map[string]string{"graph": "source>wordcount>sink"} }, []string{`storage is "" here, "fsstorage s3://b/ck" in the group`}},
	} {
		s := good
		c.change(&s)
		_, err := Join(ctx, s)
		for _, want := range c.want {
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "disagrees with the group's") {
				t.Errorf("join with %+v: %v, want a refusal naming %q", s.Agree, err, want)
			}
		}
	}
	same, err := Join(ctx, good)
	if err != nil {
		t.Fatalf("a second runner with the same settings: %v", err)
	}
	if err := same.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	plan, err := g.Balance(ctx)
	if err != nil || plan.Members != 1 || len(plan.Claimed) != len(testTasks) || len(plan.HandOver) != 0 {
		t.Fatalf("a lone member's balance: %+v, %v; want every task claimed", plan, err)
	}
	if err := g.Leave(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestAFrozenMemberIsFencedAndRejoins: a member stopped (SIGSTOP) past its lease timeout
// has its tasks claimed by the others, each at a later epoch, so its fencing tokens no
// longer stand (ownership's tests show its Check failing from then on); woken (SIGCONT),
// it finds its task leases lost and takes its share again from members handing over.
func TestAFrozenMemberIsFencedAndRejoins(t *testing.T) {
	c, _, kv := bucket(t)
	ctx := context.Background()
	ps := []*proc{startMember(t, c.URL()), startMember(t, c.URL()), startMember(t, c.URL())}
	wait := func(what string, members ...*proc) { t.Helper(); waitBalanced(t, kv, what, members...) }
	wait("six tasks over three members", ps...)
	frozen := ps[0]
	if err := frozen.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	owner, before, err := holders(ctx, kv)
	if err != nil {
		t.Fatal(err)
	}
	wait("the frozen member's tasks claimed by the other two", ps[1], ps[2])
	if err := frozen.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	wait("the woken member back with its share", ps...)
	// Every task the member held when frozen was taken at a later epoch: whatever it still
	// believed it held on waking carried a fencing token that no longer stood.
	_, after, err := holders(ctx, kv)
	if err != nil {
		t.Fatal(err)
	}
	for task, m := range owner {
		if m == frozen.ID() && after[task] <= before[task] {
			t.Errorf("task %s of the frozen member: epoch %d after it woke, %d when it froze; want a later one", task, after[task], before[task])
		}
	}
	for _, p := range ps[1:] {
		if strings.Contains(p.out.String(), "fenced") {
			t.Errorf("member %s, never frozen, was fenced:\n%s", p.ID(), p.out)
		}
	}
}

// skewed is the system clock moved by off.
type skewed struct {
	ownership.SystemClock
	off time.Duration
}

func (c skewed) Now() time.Time { return time.Now().Add(c.off) }

// TestJoinRefusesAClockOffTheServers: a runner whose clock is ahead of or behind the NATS
// server's by more than half the leases' margin is refused, naming the skew's direction,
// and leaves no live member record behind.
func TestJoinRefusesAClockOffTheServers(t *testing.T) {
	_, js, kv := bucket(t)
	ctx := context.Background()
	for off, want := range map[time.Duration]string{10 * time.Second: "ahead of the NATS server's", -10 * time.Second: "behind the NATS server's"} {
		_, err := Join(ctx, Settings{JS: js, Bucket: testBucket, Job: testJob, Tasks: testTasks, TTL: 20 * time.Second, Clock: skewed{off: off}})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "margin") {
			t.Errorf("a clock %s off: %v, want a refusal saying it is %s", off, err, want)
		}
	}
	keys, _ := kv.ListKeysFiltered(ctx, testJob+".member.*")
	n := 0
	for key := range keys.Keys() {
		n++
		e, err := kv.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if rec, err := ownership.DecodeRecord(e.Value()); err != nil || !rec.Released {
			t.Errorf("member record %s after a refused join: %+v (%v), want it released", key, rec, err)
		}
	}
	if n != 2 {
		t.Errorf("%d member records after two refused joins, want 2", n)
	}
	g, err := Join(ctx, Settings{JS: js, Bucket: testBucket, Job: testJob, Tasks: testTasks, TTL: 20 * time.Second, Clock: skewed{off: 100 * time.Millisecond}})
	if err != nil {
		t.Fatalf("a clock 100 ms off with a margin of 2 s: %v", err)
	}
	g.Leave(ctx)
}

// TestAKilledMembersTasksGoAtOnceOnItsMachine: with a lease timeout of a minute, a member
// killed with -9 has its tasks claimed at once by the members on its machine, which know
// its process is gone (ownership.Dead), and drops out of the shares, so that a member
// restarted after it gets its share without waiting for the leases to expire.
func TestAKilledMembersTasksGoAtOnceOnItsMachine(t *testing.T) {
	c, _, kv := bucket(t)
	const ttl = time.Minute
	ps := []*proc{startMemberTTL(t, c.URL(), ttl), startMemberTTL(t, c.URL(), ttl), startMemberTTL(t, c.URL(), ttl)}
	waitBalanced(t, kv, "six tasks over three members", ps...)
	if err := ps[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	ps[0].cmd.Wait()
	restarted := startMemberTTL(t, c.URL(), ttl)
	// testwait gives it 30 s, half the lease timeout: only the knowledge that the killed
	// process is gone lets the group rebalance in time.
	waitBalanced(t, kv, "the restarted member with its share, before the killed one's leases expire", ps[1], ps[2], restarted)
}
