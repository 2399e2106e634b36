package parsetree

import "bytes"

// Equal reports whether a and b are the same expression apart from the
// aliases of a and b themselves and the locations anywhere in their trees:
// the select item "sum(x) AS total" equals the "sum(x)" of a HAVING. Aliases
// deeper in the trees count, because they carry meaning there: the field
// names of struct_pack(a := 1), the columns of a subquery. Two nil
// expressions are equal; an expression Encode would refuse equals nothing.
func Equal(a, b Expr) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ca, ok := canonical(a)
	if !ok {
		return false
	}
	cb, ok := canonical(b)
	return ok && bytes.Equal(ca, cb)
}

// canonical is e encoded without its own alias and without locations.
func canonical(e Expr) ([]byte, bool) {
	w := &writer{canonical: true, bare: e}
	w.expr(e)
	return w.buf, w.err == nil
}
