package ownership

import (
	"fmt"
	"os"
	"time"
)

// identity is what tells the process of a lease holder apart on its machine: the host
// name, and on Linux the kernel's boot id, the machine id, the pid namespace and the
// process's start time. An empty field is one the system did not tell.
type identity struct {
	host, boot, machine, pidNS string
	pid                        int
	start                      uint64    // clock ticks after boot
	booted                     time.Time // when this boot began, by the wall clock
}

// self is this process's identity, read once.
var self = readSelf()

// Self returns the holder this process is for job, with control endpoint control: its
// host name and pid, and what tells the process apart on this machine (see Holder).
func Self(job, control string) Holder {
	host := self.host
	if host == "" {
		host = "unknown-host"
	}
	return Holder{Job: job, Host: host, PID: os.Getpid(), Control: control,
		Boot: self.boot, Machine: self.machine, PIDNamespace: self.pidNS, Start: self.start}
}

// Dead reports whether h's process is known to have ended, and why; when it is not, why
// says what is known instead. Only a holder of this very machine can be known dead: the
// same host name and boot id, the same pid namespace, and a pid that is gone, a zombie,
// or another process (a start time not the holder's); or the same host name and machine
// id with another boot id and a last renewal, at renewed, before this boot began (the
// machine rebooted). Whatever this process cannot tell counts as alive.
func Dead(h Holder, renewed time.Time) (dead bool, why string) {
	return judge(self, h, renewed, probe)
}

// judge is Dead for the process me, reading processes with look.
func judge(me identity, h Holder, renewed time.Time, look func(pid int) (proc, error)) (bool, string) {
	switch {
	case me.host == "" || h.Host != me.host:
		return false, fmt.Sprintf("it runs on %s, not on this machine (%s), so only its lease's expiry tells it ended", h.Host, me.host)
	case me.boot == "" || me.pidNS == "":
		return false, "this system does not tell whether it is alive"
	case h.Boot == "" || h.PIDNamespace == "":
		return false, "its record does not say enough to tell whether it is alive (a runner of an earlier version wrote it)"
	case h.Boot != me.boot:
		if h.Machine != "" && h.Machine == me.machine && renewed.Before(me.booted) {
			return true, fmt.Sprintf("its machine rebooted since its last renewal (boot id %s then, %s now)", h.Boot, me.boot)
		}
		return false, fmt.Sprintf("it may run on another machine named %s (boot id %s, not this machine's %s)", h.Host, h.Boot, me.boot)
	case h.PIDNamespace != me.pidNS:
		return false, fmt.Sprintf("it runs in another pid namespace (%s, this process in %s), so its pid means nothing here", h.PIDNamespace, me.pidNS)
	case h.PID <= 0:
		return false, "its record has no pid"
	}
	p, err := look(h.PID)
	switch {
	case err != nil:
		return false, fmt.Sprintf("pid %d could not be checked: %v", h.PID, err)
	case p.gone:
		return true, fmt.Sprintf("pid %d is gone", h.PID)
	case p.exited:
		return true, fmt.Sprintf("pid %d has exited (a zombie)", h.PID)
	case h.Start != 0 && p.start != h.Start:
		return true, fmt.Sprintf("pid %d is another process now (started at tick %d of this boot, the holder at tick %d)", h.PID, p.start, h.Start)
	case h.Start == 0:
		return false, fmt.Sprintf("pid %d is alive on this machine (the record has no start time to compare)", h.PID)
	}
	return false, fmt.Sprintf("pid %d is alive on this machine", h.PID)
}

// proc is what probe tells of a process.
type proc struct {
	gone   bool   // no such process
	exited bool   // a zombie: ended, not yet reaped
	start  uint64 // clock ticks after boot
}
