package sdk

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestErrorsCrossTheWire(t *testing.T) {
	oe := &OptionError{Option: "page-size", Value: "x", Err: fmt.Errorf("not a number: %w", ErrInvalidArgument)}
	cases := []struct {
		err   error
		is    []error
		code  codes.Code
		isOpt bool
	}{
		{fmt.Errorf("checkpoint %q: %w", "chk-3", ErrNotFound), []error{ErrNotFound}, codes.NotFound, false},
		{fmt.Errorf("crc: %w", ErrCorrupt), []error{ErrCorrupt}, codes.DataLoss, false},
		{fmt.Errorf("big: %w", ErrStateTooLarge), []error{ErrStateTooLarge}, codes.ResourceExhausted, false},
		{fmt.Errorf("fmt: %w", ErrUnsupported), []error{ErrUnsupported}, codes.Unimplemented, false},
		{context.Canceled, []error{context.Canceled}, codes.Canceled, false},
		{oe, []error{ErrInvalidArgument}, codes.InvalidArgument, true},
		{fmt.Errorf("configuring: %w", oe), []error{ErrInvalidArgument}, codes.InvalidArgument, true},
		{&OptionError{Option: "a", Value: "b"}, nil, codes.Unknown, true},
		{errors.New("plain"), nil, codes.Unknown, false},
	}
	for _, c := range cases {
		st := toStatus(c.err)
		if got := status.Code(st); got != c.code {
			t.Errorf("%v: code %v, want %v", c.err, got, c.code)
		}
		back := fromStatus(st)
		if back.Error() != c.err.Error() {
			t.Errorf("text %q, want %q", back.Error(), c.err.Error())
		}
		for _, s := range c.is {
			if !errors.Is(back, s) {
				t.Errorf("%v lost %v", back, s)
			}
		}
		var got *OptionError
		if errors.As(back, &got) != c.isOpt {
			t.Errorf("%v: option error %v, want %v", c.err, got != nil, c.isOpt)
		} else if c.isOpt {
			var want *OptionError
			errors.As(c.err, &want)
			if got.Option != want.Option || got.Value != want.Value || got.Error() != want.Error() {
				t.Errorf("option error %+v, want %+v", got, want)
			}
		}
	}
	if fromStatus(nil) != nil || toStatus(nil) != nil {
		t.Error("nil errors must stay nil")
	}
	if err := fromStatus(status.Error(codes.Unavailable, "connection refused")); err.Error() != "plugin unavailable: connection refused" {
		t.Errorf("transport error: %v", err)
	}
}

func TestBatchEndBoundsPayload(t *testing.T) {
	items := make([][]byte, 10)
	for i := range items {
		items[i] = make([]byte, 300<<10)
	}
	size := func(b []byte) int { return len(b) }
	if n := batchEnd(items, size); n != 3 {
		t.Errorf("batch of 300 KiB items: %d, want 3", n)
	}
	huge := [][]byte{make([]byte, 5<<20), {1}}
	if n := batchEnd(huge, size); n != 1 {
		t.Errorf("an item above the bound still goes alone: %d, want 1", n)
	}
	if n := batchEnd([][]byte{}, size); n != 0 {
		t.Errorf("empty: %d", n)
	}
}
