package parsetree

import "errors"

// The kinds of PathError; test them with errors.Is.
var (
	// ErrUnknownField is a field the model does not know: DuckDB added or
	// renamed one.
	ErrUnknownField = errors.New("unknown field")
	// ErrMissingField is a field the model needs that is absent.
	ErrMissingField = errors.New("missing field")
	// ErrUnknownKind is a class, type or enumeration value the model does not
	// know, or a construct it does not model (a value of type ENUM, a type's
	// extension info).
	ErrUnknownKind = errors.New("unknown kind")
	// ErrInvalid is a field of the wrong JSON type or out of its range, or,
	// when encoding, a tree that DuckDB could not read (a nil where an
	// expression is required, Value data of the wrong Go type).
	ErrInvalid = errors.New("invalid")
)

// PathError is an error of decoding or encoding a parse tree, at Path: the
// fields and list indexes from the document's root, as in
// "statements[0].node.from_table.left".
type PathError struct {
	Path string
	Msg  string
	// Err is the kind: ErrUnknownField, ErrMissingField, ErrUnknownKind or
	// ErrInvalid.
	Err error
}

func (e *PathError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

func (e *PathError) Unwrap() error { return e.Err }
