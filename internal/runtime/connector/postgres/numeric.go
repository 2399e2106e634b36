package postgres

import (
	"fmt"
	"math/big"

	"github.com/apache/arrow-go/v18/arrow/decimal128"
)

// Sign words of the numeric binary format.
const (
	numericPos  = 0x0000
	numericNeg  = 0x4000
	numericNaN  = 0xC000
	numericPInf = 0xD000
	numericNInf = 0xF000
)

var (
	bigOne         = big.NewInt(1)
	bigTenThousand = big.NewInt(10000)
	bigTen         = big.NewInt(10)
	// pow10 holds 10^0 .. 10^80, enough for any rescaling of a value that fits.
	pow10 = func() []*big.Int {
		p := make([]*big.Int, 81)
		p[0] = big.NewInt(1)
		for i := 1; i < len(p); i++ {
			p[i] = new(big.Int).Mul(p[i-1], bigTen)
		}
		return p
	}()
)

// numericDecoder turns numeric values in binary format into decimal128 at a fixed
// precision and scale. It keeps its big.Int scratch space, so a column decodes
// without allocating per value. Not safe for concurrent use.
type numericDecoder struct {
	prec, scale         int32
	acc, tmp, quot, rem big.Int
}

// decode reads ndigits, weight, sign, dscale (int16 each), then ndigits base-10000
// digits, most significant first: value = sum(digit[i] * 10000^(weight-i)).
func (d *numericDecoder) decode(raw []byte) (decimal128.Num, error) {
	if len(raw) < 8 {
		return decimal128.Num{}, errLen("numeric", raw)
	}
	ndigits := int(int16(be.Uint16(raw[0:])))
	weight := int(int16(be.Uint16(raw[2:])))
	sign := be.Uint16(raw[4:])
	switch sign {
	case numericPos, numericNeg:
	case numericNaN:
		return decimal128.Num{}, fmt.Errorf("%w: numeric NaN, which a decimal cannot hold", ErrValue)
	case numericPInf, numericNInf:
		return decimal128.Num{}, fmt.Errorf("%w: numeric infinity, which a decimal cannot hold", ErrValue)
	default:
		return decimal128.Num{}, fmt.Errorf("malformed binary numeric value (sign %#x)", sign)
	}
	if ndigits < 0 || len(raw) != 8+2*ndigits {
		return decimal128.Num{}, errLen("numeric", raw)
	}

	acc := d.acc.SetInt64(0)
	for i := range ndigits {
		acc.Mul(acc, bigTenThousand)
		acc.Add(acc, d.tmp.SetInt64(int64(be.Uint16(raw[8+2*i:]))))
	}
	// acc * 10^exp is the value scaled by 10^scale.
	exp := 4*(weight-ndigits+1) + int(d.scale)
	switch {
	case acc.Sign() == 0:
	case exp > 0:
		if exp >= len(pow10) {
			return decimal128.Num{}, d.overflow()
		}
		acc.Mul(acc, pow10[exp])
	case exp < 0:
		// For numeric(p,s) the division is exact: the wire format only pads to whole
		// base-10000 digits. Unconstrained numeric may carry more fractional digits
		// than our scale; those are rounded.
		div := &d.tmp
		if -exp < len(pow10) {
			div.Set(pow10[-exp])
		} else {
			div.Exp(bigTen, big.NewInt(int64(-exp)), nil)
		}
		d.quot.QuoRem(acc, div, &d.rem)
		// Round half away from zero, as Postgres does (acc is the magnitude).
		if d.rem.Lsh(&d.rem, 1).Cmp(div) >= 0 {
			d.quot.Add(&d.quot, bigOne)
		}
		acc.Set(&d.quot)
	}
	if acc.Cmp(pow10[d.prec]) >= 0 {
		return decimal128.Num{}, d.overflow()
	}
	if sign == numericNeg {
		acc.Neg(acc)
	}
	return decimal128.FromBigInt(acc), nil
}

func (d *numericDecoder) overflow() error {
	return fmt.Errorf("%w: numeric value does not fit decimal128(%d,%d): cast the column to a smaller value range or to double precision in a Postgres view", ErrValue, d.prec, d.scale)
}
