package demux

import (
	"context"
	"errors"
	"io"
	"testing"
)

// msg is a test message: the key it answers under and a label.
type msg struct {
	key   uint64
	label string
}

// stream feeds Receive the messages sent on in, then io.EOF when in closes.
func stream(in <-chan msg) func() (msg, error) {
	return func() (msg, error) {
		m, ok := <-in
		if !ok {
			return msg{}, io.EOF
		}
		return m, nil
	}
}

func key(m msg) (uint64, bool) { return m.key, m.key != 99 } // 99 answers no call

var errEnded = errors.New("the stream ended")

func ended(err error) error {
	if errors.Is(err, io.EOF) {
		return errEnded
	}
	return err
}

// TestAnswersGoToTheOldestCallOfTheirKey: answers under one key reach its calls in the
// order they were registered, whatever other keys' answers come between them.
func TestAnswersGoToTheOldestCallOfTheirKey(t *testing.T) {
	in := make(chan msg, 8)
	d := New[msg]()
	go d.Receive(stream(in), key, ended)
	ctx := context.Background()
	a1, a2, b := d.Expect(1), d.Expect(1), d.Expect(2)
	in <- msg{2, "b"}
	in <- msg{99, "no call"}
	in <- msg{1, "a1"}
	in <- msg{1, "a2"}
	for _, c := range []struct {
		call Call[msg]
		want string
	}{{b, "b"}, {a1, "a1"}, {a2, "a2"}} {
		if m, err := c.call.Wait(ctx); err != nil || m.label != c.want {
			t.Errorf("answer %q, %v; want %q", m.label, err, c.want)
		}
	}
	close(in)
	<-d.Done()
}

// TestTheEndFailsTheWaitingCalls: a call still waiting when the stream ends gets the
// stream's error; an answer that came before the end is still delivered.
func TestTheEndFailsTheWaitingCalls(t *testing.T) {
	in := make(chan msg, 2)
	d := New[msg]()
	answered, waiting := d.Expect(1), d.Expect(2)
	in <- msg{1, "before the end"}
	close(in)
	d.Receive(stream(in), key, ended)
	if m, err := answered.Wait(context.Background()); err != nil || m.label != "before the end" {
		t.Errorf("answered call: %q, %v", m.label, err)
	}
	if _, err := waiting.Wait(context.Background()); !errors.Is(err, errEnded) {
		t.Errorf("waiting call: %v; want the stream's end", err)
	}
	if !errors.Is(d.Err(), errEnded) {
		t.Errorf("Err = %v", d.Err())
	}
}

// TestForgottenAndAbandonedCalls: a forgotten call leaves its key's next answer to the
// call behind it; a call abandoned by its context stays in line, so the answers behind it
// still reach theirs.
func TestForgottenAndAbandonedCalls(t *testing.T) {
	in := make(chan msg, 4)
	d := New[msg]()
	go d.Receive(stream(in), key, ended)
	forgotten, abandoned, last := d.Expect(1), d.Expect(1), d.Expect(1)
	forgotten.Forget()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := abandoned.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned call: %v; want its context's error", err)
	}
	in <- msg{1, "for abandoned"}
	in <- msg{1, "for last"}
	if m, err := last.Wait(context.Background()); err != nil || m.label != "for last" {
		t.Errorf("last call: %q, %v; want %q", m.label, err, "for last")
	}
	close(in)
	<-d.Done()
}
