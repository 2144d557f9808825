package sdk

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/flowstate/flowstate/sdk/internal/proto"
)

// remoteError is an error that crossed the plugin boundary: its text as the other side
// formatted it, and the sentinel errors (and option error) it wrapped there.
type remoteError struct {
	msg    string
	causes []error
}

func (e *remoteError) Error() string   { return e.msg }
func (e *remoteError) Unwrap() []error { return e.causes }

var errorKinds = []struct {
	kind pb.ErrorKind
	err  error
	code codes.Code
}{
	{pb.ErrorKind_ERROR_KIND_NOT_FOUND, ErrNotFound, codes.NotFound},
	{pb.ErrorKind_ERROR_KIND_INVALID_ARGUMENT, ErrInvalidArgument, codes.InvalidArgument},
	{pb.ErrorKind_ERROR_KIND_STATE_TOO_LARGE, ErrStateTooLarge, codes.ResourceExhausted},
	{pb.ErrorKind_ERROR_KIND_UNSUPPORTED, ErrUnsupported, codes.Unimplemented},
	{pb.ErrorKind_ERROR_KIND_CORRUPT, ErrCorrupt, codes.DataLoss},
	{pb.ErrorKind_ERROR_KIND_CANCELED, context.Canceled, codes.Canceled},
	{pb.ErrorKind_ERROR_KIND_DEADLINE_EXCEEDED, context.DeadlineExceeded, codes.DeadlineExceeded},
	{pb.ErrorKind_ERROR_KIND_CONFLICT, ErrConflict, codes.Aborted},
}

func kindOf(err error) pb.ErrorKind {
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			return k.kind
		}
	}
	return pb.ErrorKind_ERROR_KIND_UNKNOWN
}

func sentinelOf(kind pb.ErrorKind) error {
	for _, k := range errorKinds {
		if k.kind == kind {
			return k.err
		}
	}
	return nil
}

func codeOf(kind pb.ErrorKind) codes.Code {
	for _, k := range errorKinds {
		if k.kind == kind {
			return k.code
		}
	}
	return codes.Unknown
}

// errorToProto describes err for the other side; nil for nil.
func errorToProto(err error) *pb.Error {
	if err == nil {
		return nil
	}
	e := &pb.Error{Kind: kindOf(err), Message: err.Error()}
	var oe *OptionError
	if errors.As(err, &oe) {
		e.OptionError = true
		e.Option = oe.Option
		e.Value = oe.Value
		if oe.Err != nil {
			e.OptionCause = oe.Err.Error()
		}
	}
	return e
}

// errorFromProto rebuilds an error described by errorToProto: same text, same sentinel,
// and an *OptionError with the same fields when there was one; nil for nil.
func errorFromProto(e *pb.Error) error {
	if e == nil {
		return nil
	}
	var causes []error
	if s := sentinelOf(e.Kind); s != nil {
		causes = append(causes, s)
	}
	if !e.OptionError {
		return &remoteError{msg: e.Message, causes: causes}
	}
	oe := &OptionError{Option: e.Option, Value: e.Value}
	if e.OptionCause != "" || len(causes) > 0 {
		oe.Err = &remoteError{msg: e.OptionCause, causes: causes}
	}
	if oe.Error() == e.Message {
		return oe
	}
	return &remoteError{msg: e.Message, causes: append(causes, oe)}
}

// toStatus turns an error of a plugin method into a gRPC status error that carries its
// description. Status errors (from gRPC itself) pass unchanged.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(interface{ GRPCStatus() *status.Status }); ok {
		return err
	}
	pe := errorToProto(err)
	st, derr := status.New(codeOf(pe.Kind), pe.Message).WithDetails(pe)
	if derr != nil {
		return status.Error(codeOf(pe.Kind), pe.Message)
	}
	return st.Err()
}

// fromStatus turns the error of a gRPC call back into the plugin's error; errors without
// a description (transport failures, gRPC's own) keep their text and gain the sentinel of
// their code.
func fromStatus(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	for _, d := range st.Details() {
		if pe, ok := d.(*pb.Error); ok {
			return errorFromProto(pe)
		}
	}
	switch st.Code() {
	case codes.Unavailable:
		return &remoteError{msg: "plugin unavailable: " + st.Message()}
	case codes.Canceled:
		return &remoteError{msg: st.Message(), causes: []error{context.Canceled}}
	case codes.DeadlineExceeded:
		return &remoteError{msg: st.Message(), causes: []error{context.DeadlineExceeded}}
	}
	for _, k := range errorKinds {
		if k.code == st.Code() {
			return &remoteError{msg: st.Message(), causes: []error{k.err}}
		}
	}
	return &remoteError{msg: st.Message()}
}
