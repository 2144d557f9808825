package wire

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// Sentinels are the sentinel errors of package sdk that keep their identity across the
// boundary; each end passes its own view of them (the same values) to NewErrors.
type Sentinels struct {
	NotFound, InvalidArgument, StateTooLarge, Unsupported, Corrupt, Conflict error
}

// OptionFields are the fields of an *sdk.OptionError.
type OptionFields struct {
	Option, Value string
	Err           error
}

// OptionCodec finds and builds *sdk.OptionError values, which package wire cannot name.
type OptionCodec struct {
	// Find returns the fields of the *sdk.OptionError in err's chain, if there is one.
	Find func(err error) (OptionFields, bool)
	// New returns an *sdk.OptionError with the given fields.
	New func(OptionFields) error
}

// Errors converts errors to and from the protocol: its text, the sentinel it wraps (as an
// ErrorKind and a gRPC code) and an *sdk.OptionError's fields.
type Errors struct {
	kinds   []errorKind
	options OptionCodec
}

type errorKind struct {
	kind pb.ErrorKind
	err  error
	code codes.Code
}

// NewErrors returns the codec of errors wrapping s's sentinels and options' option errors.
func NewErrors(s Sentinels, options OptionCodec) *Errors {
	return &Errors{options: options, kinds: []errorKind{
		{pb.ErrorKind_ERROR_KIND_NOT_FOUND, s.NotFound, codes.NotFound},
		{pb.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, s.InvalidArgument, codes.InvalidArgument},
		{pb.ErrorKind_ERROR_KIND_STATE_TOO_LARGE, s.StateTooLarge, codes.ResourceExhausted},
		{pb.ErrorKind_ERROR_KIND_UNSUPPORTED, s.Unsupported, codes.Unimplemented},
		{pb.ErrorKind_ERROR_KIND_CORRUPT, s.Corrupt, codes.DataLoss},
		{pb.ErrorKind_ERROR_KIND_CANCELED, context.Canceled, codes.Canceled},
		{pb.ErrorKind_ERROR_KIND_DEADLINE_EXCEEDED, context.DeadlineExceeded, codes.DeadlineExceeded},
		{pb.ErrorKind_ERROR_KIND_CONFLICT, s.Conflict, codes.Aborted},
	}}
}

// remoteError is an error that crossed the plugin boundary: its text as the other side
// formatted it, and the sentinel errors (and option error) it wrapped there.
type remoteError struct {
	msg    string
	causes []error
}

func (e *remoteError) Error() string   { return e.msg }
func (e *remoteError) Unwrap() []error { return e.causes }

func (c *Errors) kindOf(err error) errorKind {
	for _, k := range c.kinds {
		if errors.Is(err, k.err) {
			return k
		}
	}
	return errorKind{kind: pb.ErrorKind_ERROR_KIND_UNKNOWN, code: codes.Unknown}
}

func (c *Errors) byKind(kind pb.ErrorKind) errorKind {
	for _, k := range c.kinds {
		if k.kind == kind {
			return k
		}
	}
	return errorKind{kind: kind, code: codes.Unknown}
}

// ToProto describes err for the other side; nil for nil.
func (c *Errors) ToProto(err error) *pb.Error {
	if err == nil {
		return nil
	}
	e := &pb.Error{Kind: c.kindOf(err).kind, Message: err.Error()}
	if oe, ok := c.options.Find(err); ok {
		e.OptionError = true
		e.Option = oe.Option
		e.Value = oe.Value
		if oe.Err != nil {
			e.OptionCause = oe.Err.Error()
		}
	}
	return e
}

// FromProto rebuilds an error described by ToProto: same text, same sentinel, and an
// *sdk.OptionError with the same fields when there was one; nil for nil.
func (c *Errors) FromProto(e *pb.Error) error {
	if e == nil {
		return nil
	}
	var causes []error
	if s := c.byKind(e.Kind).err; s != nil {
		causes = append(causes, s)
	}
	if !e.OptionError {
		return &remoteError{msg: e.Message, causes: causes}
	}
	fields := OptionFields{Option: e.Option, Value: e.Value}
	if e.OptionCause != "" || len(causes) > 0 {
		fields.Err = &remoteError{msg: e.OptionCause, causes: causes}
	}
	oe := c.options.New(fields)
	if oe.Error() == e.Message {
		return oe
	}
	return &remoteError{msg: e.Message, causes: append(causes, oe)}
}

// ToStatus turns an error of a plugin method into a gRPC status error that carries its
// description. Status errors (from gRPC itself) pass unchanged.
func (c *Errors) ToStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(interface{ GRPCStatus() *status.Status }); ok {
		return err
	}
	pe := c.ToProto(err)
	code := c.byKind(pe.Kind).code
	st, derr := status.New(code, pe.Message).WithDetails(pe)
	if derr != nil {
		return status.Error(code, pe.Message)
	}
	return st.Err()
}

// FromStatus turns the error of a gRPC call back into the plugin's error; errors without
// a description (transport failures, gRPC's own) keep their text and gain the sentinel of
// their code.
func (c *Errors) FromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	for _, d := range st.Details() {
		if pe, ok := d.(*pb.Error); ok {
			return c.FromProto(pe)
		}
	}
	if st.Code() == codes.Unavailable {
		return &remoteError{msg: "plugin unavailable: " + st.Message()}
	}
	for _, k := range c.kinds {
		if k.code == st.Code() {
			return &remoteError{msg: st.Message(), causes: []error{k.err}}
		}
	}
	return &remoteError{msg: st.Message()}
}
