package wire

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The sentinels and option error of package sdk, as this test plays them.
var (
	errNotFound    = errors.New("not found")
	errInvalid     = errors.New("invalid argument")
	errTooLarge    = errors.New("state too large")
	errUnsupported = errors.New("unsupported")
	errCorrupt     = errors.New("corrupt")
	errConflict    = errors.New("conflict")
)

type optionError struct {
	Option, Value string
	Err           error
}

func (e *optionError) Error() string {
	return fmt.Sprintf("option %q (value %q): %v", e.Option, e.Value, e.Err)
}

func (e *optionError) Unwrap() error { return e.Err }

var testErrors = NewErrors(Sentinels{
	NotFound: errNotFound, InvalidArgument: errInvalid, StateTooLarge: errTooLarge,
	Unsupported: errUnsupported, Corrupt: errCorrupt, Conflict: errConflict,
}, OptionCodec{
	Find: func(err error) (OptionFields, bool) {
		var oe *optionError
		if !errors.As(err, &oe) {
			return OptionFields{}, false
		}
		return OptionFields{Option: oe.Option, Value: oe.Value, Err: oe.Err}, true
	},
	New: func(f OptionFields) error { return &optionError{Option: f.Option, Value: f.Value, Err: f.Err} },
})

func TestErrorsCrossTheWire(t *testing.T) {
	oe := &optionError{Option: "page-size", Value: "x", Err: fmt.Errorf("not a number: %w", errInvalid)}
	cases := []struct {
		err   error
		is    []error
		code  codes.Code
		isOpt bool
	}{
		{fmt.Errorf("checkpoint %q: %w", "chk-3", errNotFound), []error{errNotFound}, codes.NotFound, false},
		{fmt.Errorf("crc: %w", errCorrupt), []error{errCorrupt}, codes.DataLoss, false},
		{fmt.Errorf("big: %w", errTooLarge), []error{errTooLarge}, codes.ResourceExhausted, false},
		{fmt.Errorf("fmt: %w", errUnsupported), []error{errUnsupported}, codes.Unimplemented, false},
		{fmt.Errorf("lost the race: %w", errConflict), []error{errConflict}, codes.Aborted, false},
		{context.Canceled, []error{context.Canceled}, codes.Canceled, false},
		{oe, []error{errInvalid}, codes.InvalidArgument, true},
		{fmt.Errorf("configuring: %w", oe), []error{errInvalid}, codes.InvalidArgument, true},
		{&optionError{Option: "a", Value: "b"}, nil, codes.Unknown, true},
		{errors.New("plain"), nil, codes.Unknown, false},
	}
	for _, c := range cases {
		st := testErrors.ToStatus(c.err)
		if got := status.Code(st); got != c.code {
			t.Errorf("%v: code %v, want %v", c.err, got, c.code)
		}
		back := testErrors.FromStatus(st)
		if back.Error() != c.err.Error() {
			t.Errorf("text %q, want %q", back.Error(), c.err.Error())
		}
		for _, s := range c.is {
			if !errors.Is(back, s) {
				t.Errorf("%v lost %v", back, s)
			}
		}
		var got *optionError
		if errors.As(back, &got) != c.isOpt {
			t.Errorf("%v: option error %v, want %v", c.err, got != nil, c.isOpt)
		} else if c.isOpt {
			var want *optionError
			errors.As(c.err, &want)
			if got.Option != want.Option || got.Value != want.Value || got.Error() != want.Error() {
				t.Errorf("option error %+v, want %+v", got, want)
			}
		}
	}
	if testErrors.FromStatus(nil) != nil || testErrors.ToStatus(nil) != nil {
		t.Error("nil errors must stay nil")
	}
	if err := testErrors.FromStatus(status.Error(codes.Unavailable, "connection refused")); err.Error() != "plugin unavailable: connection refused" {
		t.Errorf("transport error: %v", err)
	}
	if err := testErrors.FromStatus(status.Error(codes.DeadlineExceeded, "too slow")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a status without details keeps the sentinel of its code: %v", err)
	}
}
