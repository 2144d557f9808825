package ownership

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestJudge: a holder is dead only when this machine can tell: its pid gone, a zombie, or
// reused (another start time) in this boot and pid namespace, or this machine rebooted
// since its last renewal. Another host, boot id or pid namespace, a record without the
// identity, or a pid that cannot be checked counts as alive.
func TestJudge(t *testing.T) {
	booted := time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)
	me := identity{host: "host-a", boot: "boot-1", machine: "m-1", pidNS: "pid:[1]", pid: 50, start: 900, booted: booted}
	holder := Holder{Job: "wc", Host: "host-a", PID: 7, Boot: "boot-1", Machine: "m-1", PIDNamespace: "pid:[1]", Start: 300}
	after, before := booted.Add(time.Minute), booted.Add(-time.Minute)
	procs := map[int]proc{
		7:  {start: 300},               // the holder itself, alive
		8:  {start: 301},               // pid 8 reused by a later process
		9:  {exited: true, start: 300}, // a zombie
		10: {gone: true},
	}
	look := func(pid int) (proc, error) {
		if p, ok := procs[pid]; ok {
			return p, nil
		}
		return proc{}, errors.New("permission denied")
	}
	with := func(f func(h *Holder)) Holder { h := holder; f(&h); return h }
	for _, c := range []struct {
		name    string
		h       Holder
		renewed time.Time
		me      identity
		dead    bool
		why     string
	}{
		{"alive", holder, after, me, false, "pid 7 is alive on this machine"},
		{"pid gone", with(func(h *Holder) { h.PID = 10 }), after, me, true, "pid 10 is gone"},
		{"pid reused", with(func(h *Holder) { h.PID = 8 }), after, me, true, "pid 8 is another process now (started at tick 301 of this boot, the holder at tick 300)"},
		{"zombie", with(func(h *Holder) { h.PID = 9 }), after, me, true, "pid 9 has exited"},
		{"pid not checkable", with(func(h *Holder) { h.PID = 11 }), after, me, false, "pid 11 could not be checked"},
		{"other host", with(func(h *Holder) { h.Host = "host-b"; h.PID = 10 }), after, me, false, "it runs on host-b, not on this machine (host-a)"},
		{"other pid namespace", with(func(h *Holder) { h.PIDNamespace = "pid:[2]"; h.PID = 10 }), after, me, false, "another pid namespace"},
		{"record without identity", with(func(h *Holder) { h.Boot, h.PIDNamespace, h.Start = "", "", 0; h.PID = 10 }), after, me, false, "its record does not say enough"},
		{"this system without identity", with(func(h *Holder) { h.PID = 10 }), after, identity{host: "host-a"}, false, "this system does not tell"},
		{"rebooted", with(func(h *Holder) { h.Boot = "boot-0" }), before, me, true, "its machine rebooted since its last renewal (boot id boot-0 then, boot-1 now)"},
		{"other boot, renewed after this boot", with(func(h *Holder) { h.Boot = "boot-0" }), after, me, false, "it may run on another machine named host-a"},
		{"other boot, other machine id", with(func(h *Holder) { h.Boot, h.Machine = "boot-0", "m-2" }), before, me, false, "it may run on another machine named host-a"},
		{"other boot, no machine id", with(func(h *Holder) { h.Boot, h.Machine = "boot-0", "" }), before, me, false, "it may run on another machine named host-a"},
		{"no start time", with(func(h *Holder) { h.Start = 0; h.PID = 8 }), after, me, false, "pid 8 is alive on this machine (the record has no start time to compare)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dead, why := judge(c.me, c.h, c.renewed, look)
			if dead != c.dead || !strings.Contains(why, c.why) {
				t.Fatalf("judge = %v, %q; want %v, saying %q", dead, why, c.dead, c.why)
			}
		})
	}
}
