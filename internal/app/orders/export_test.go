package orders

// KindOf exposes kindOf to the table test.
var KindOf = kindOf
