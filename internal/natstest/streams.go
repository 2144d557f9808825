package natstest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/flowstate/flowstate/internal/jsread"
	"github.com/flowstate/flowstate/internal/testwait"
)

// apiTimeout bounds each JetStream API call of the helpers below.
const apiTimeout = 30 * time.Second

// CreateStream creates a stream with cfg (file storage and one replica unless cfg says
// otherwise; set Subjects, Replicas, AllowAtomicPublish, Duplicates, MaxMsgs, MaxAge as
// the test needs) and fails t, naming the stream, if the server refuses it.
func CreateStream(t testing.TB, js jetstream.JetStream, cfg jetstream.StreamConfig) jetstream.Stream {
	t.Helper()
	var s jetstream.Stream
	// A cluster just started may have a meta leader that does not know every peer yet: it
	// refuses an R3 stream with "no suitable peers for placement" (seen once in 4 runs of
	// the e2e tests) for a moment, and the creation is tried again.
	testwait.For(t, fmt.Sprintf("stream %s (subjects %v, replicas %d) to be created", cfg.Name, cfg.Subjects, cfg.Replicas), apiTimeout, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
		defer cancel()
		var err error
		s, err = js.CreateStream(ctx, cfg)
		var api *jetstream.APIError
		if errors.As(err, &api) && api.ErrorCode == noPeersForPlacement {
			return err
		}
		if err != nil {
			return testwait.Stop(fmt.Errorf("natstest: create stream %s (subjects %v, replicas %d): %w", cfg.Name, cfg.Subjects, cfg.Replicas, err))
		}
		return nil
	})
	return s
}

// noPeersForPlacement is JetStream's error code for a stream whose replicas find too few
// servers (JSClusterNoPeersErr).
const noPeersForPlacement = 10005

// Message is a message of a stream as a helper published or read it.
type Message = jsread.Message

// PartitionSubject is the subject of partition i of a text published under prefix:
// prefix.i ("in.3").
func PartitionSubject(prefix string, i int) string { return fmt.Sprintf("%s.%d", prefix, i) }

// Lines are the lines of text without their line ends, as PublishText publishes them: a
// final line end does not start another line.
func Lines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// PublishText publishes each line of text (Lines) as one message, line i on partition
// subject prefix.(i mod partitions), asynchronously, and waits for every acknowledgement;
// it fails t on any refused publish. It returns the messages in line order with the
// sequences the stream gave them.
func PublishText(t testing.TB, js jetstream.JetStream, prefix string, partitions int, text string) []Message {
	t.Helper()
	if partitions < 1 {
		t.Fatalf("natstest: publish under %s: %d partitions", prefix, partitions)
	}
	lines := Lines(text)
	futures := make([]jetstream.PubAckFuture, len(lines))
	out := make([]Message, len(lines))
	for i, line := range lines {
		subj := PartitionSubject(prefix, i%partitions)
		f, err := js.PublishAsync(subj, []byte(line))
		if err != nil {
			t.Fatalf("natstest: publish line %d on %s: %v", i+1, subj, err)
		}
		futures[i] = f
		out[i] = Message{Subject: subj, Data: []byte(line)}
	}
	deadline := time.After(apiTimeout)
	for i, f := range futures {
		select {
		case ack := <-f.Ok():
			out[i].Sequence = ack.Sequence
		case err := <-f.Err():
			t.Fatalf("natstest: publish line %d on %s: %v", i+1, out[i].Subject, err)
		case <-deadline:
			t.Fatalf("natstest: publish under %s: %d of %d lines unacknowledged after %s", prefix, len(lines)-i, len(lines), apiTimeout)
		}
	}
	return out
}

// ReadAll reads every message stream holds on subjects (filters such as "out.>"; none:
// all of them), in stream order, with an ordered consumer, until none is pending.
func ReadAll(t testing.TB, js jetstream.JetStream, stream string, subjects ...string) []Message {
	t.Helper()
	var msgs []Message
	// A cluster that has just lost a node answers "no responders", or nothing within the
	// request's timeout, for a while (until its stream has a leader again, which a busy
	// machine can take well over 30 s to elect): the read starts over, with a fresh
	// consumer, for up to four request timeouts.
	testwait.For(t, fmt.Sprintf("a read of stream %s %v", stream, subjects), 4*apiTimeout, func() error {
		var err error
		msgs, err = readAll(js, stream, subjects)
		if err != nil && !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, context.DeadlineExceeded) {
			return testwait.Stop(err)
		}
		return err
	})
	return msgs
}

func readAll(js jetstream.JetStream, stream string, subjects []string) ([]Message, error) {
	ctx, cancel := context.WithTimeout(context.Background(), apiTimeout)
	defer cancel()
	return jsread.All(ctx, js, stream, apiTimeout, subjects...)
}
