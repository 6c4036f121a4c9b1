package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"
)

// Numeric variables. Every integer field of Config has an accepted range:
// its `min` tag (default 0) to its `max` tag. A field without a `max` tag
// gets DefaultMaxSeconds when its variable ends in _SECONDS (so a new
// duration variable is bounded without anyone remembering to), else
// math.MaxInt32. Load reads the numbers itself, in decimal, so that a value
// that is not a number gets the same kind of message as every other bad
// value, and Validate checks the ranges; the ranges keep every *_SECONDS
// value far below the 292 years a time.Duration can hold, so converting
// to a duration never wraps around.

// DefaultMaxSeconds bounds a *_SECONDS variable that has no `max` tag:
// 7 days.
const DefaultMaxSeconds = 7 * 24 * 60 * 60

// field is one variable: its name in the environment and its struct field.
type field struct {
	key string // LEASHD_…
	sf  reflect.StructField
}

// fields lists Config's variables with the names envconfig gives them.
func fields() []field { return fieldsOf(Prefix, reflect.TypeFor[Config]()) }

// fieldsOf lists the variables of the struct type typ read under prefix.
func fieldsOf(prefix string, typ reflect.Type) []field {
	var buf bytes.Buffer
	// The template sees envconfig's own variable list, so the names are
	// exactly the ones Process reads.
	if err := envconfig.Usagef(prefix, reflect.New(typ).Interface(), &buf, "{{range .}}{{.Key}} {{.Name}}\n{{end}}"); err != nil {
		panic("config: listing variables: " + err.Error()) // typ is a struct: cannot happen
	}
	var out []field
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		key, name, _ := strings.Cut(line, " ")
		if sf, ok := typ.FieldByName(name); ok {
			out = append(out, field{key: key, sf: sf})
		}
	}
	return out
}

// numberRange is the accepted range of an integer variable.
type numberRange struct {
	min, max int64
	seconds  bool
}

func rangeOf(f field) (numberRange, bool) {
	switch f.sf.Type.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return numberRange{}, false
	}
	if f.sf.Type == reflect.TypeFor[time.Duration]() {
		return numberRange{}, false
	}
	r := numberRange{max: math.MaxInt32, seconds: strings.HasSuffix(f.key, "_SECONDS")}
	if r.seconds {
		r.max = DefaultMaxSeconds
	}
	if v, err := strconv.ParseInt(f.sf.Tag.Get("min"), 10, 64); err == nil {
		r.min = v
	}
	if v, err := strconv.ParseInt(f.sf.Tag.Get("max"), 10, 64); err == nil {
		r.max = v
	}
	// The field's own type bounds the range too.
	if t := f.sf.Type; t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
		r.min = max(r.min, 0)
		if t.Bits() < 64 {
			r.max = min(r.max, int64(1)<<t.Bits()-1)
		}
	} else if t.Bits() < 64 {
		r.min = max(r.min, -(int64(1) << (t.Bits() - 1)))
		r.max = min(r.max, int64(1)<<(t.Bits()-1)-1)
	}
	return r, true
}

// accepted says what the range accepts, e.g. "a whole number of seconds
// from 0 to 604800 (7 days)".
func (r numberRange) accepted() string {
	if !r.seconds {
		return fmt.Sprintf("a whole number from %d to %d", r.min, r.max)
	}
	return fmt.Sprintf("a whole number of seconds from %d to %d (%s)", r.min, r.max, humanSeconds(r.max))
}

// humanSeconds writes n seconds in the largest whole unit.
func humanSeconds(n int64) string {
	plural := func(v int64, unit string) string {
		if v == 1 {
			return "1 " + unit
		}
		return strconv.FormatInt(v, 10) + " " + unit + "s"
	}
	switch {
	case n != 0 && n%86400 == 0:
		return plural(n/86400, "day")
	case n != 0 && n%3600 == 0:
		return plural(n/3600, "hour")
	case n != 0 && n%60 == 0:
		return plural(n/60, "minute")
	}
	return plural(n, "second")
}

// readsItself reports whether process parses a field of type t itself
// rather than envconfig.
func readsItself(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// process fills c like envconfig.Process(prefix, c), except that numbers
// and booleans are parsed here: envconfig reads integers in Go syntax
// ("010" is octal 8, "08" an error, "1_0" ten), reports a bad value with
// its internals, and stops at the first. Here a number is decimal, and
// every value that is not what its variable accepts gets one error naming
// the variable, the value and what is accepted. envconfig still does the
// rest (names, defaults, lists, strings), on a copy of Config whose numeric
// and boolean fields are strings.
//
// dst points to a struct: Config, or a chat app's settings (see Section).
// A list ([]string) is read comma-separated, each item trimmed of spaces
// and empty items dropped.
func process(prefix string, lookup func(string) (string, bool), dst any) error {
	cv := reflect.ValueOf(dst).Elem()
	typ := cv.Type()
	var sfs []reflect.StructField
	var index []int // index in Config of sfs[i]
	for i := range typ.NumField() {
		sf := typ.Field(i)
		if !sf.IsExported() {
			continue
		}
		if readsItself(sf.Type) {
			sf.Type = reflect.TypeFor[string]()
		}
		sf.Index, sf.Offset = nil, 0
		sfs = append(sfs, sf)
		index = append(index, i)
	}
	raw := reflect.New(reflect.StructOf(sfs))
	if err := envconfig.Process(prefix, raw.Interface()); err != nil {
		return parseErrorMessage(err)
	}
	byName := map[string]field{}
	for _, f := range fieldsOf(prefix, typ) {
		byName[f.sf.Name] = f
	}
	var errs []error
	for i, sf := range sfs {
		src, dst := raw.Elem().Field(i), cv.Field(index[i])
		if !readsItself(dst.Type()) {
			dst.Set(src)
			if list, ok := dst.Interface().([]string); ok {
				dst.Set(reflect.ValueOf(trimList(list)))
			}
			continue
		}
		f, ok := byName[sf.Name]
		if !ok {
			continue
		}
		if _, set := lookup(f.key); !set && f.sf.Tag.Get("default") == "" {
			continue // unset, no default: the zero value
		}
		if err := setScalar(f, dst, src.String()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// setScalar parses value into dst, the field of f, or says why it cannot.
func setScalar(f field, dst reflect.Value, value string) error {
	bad := func(why, accepted string) error {
		if value == "" {
			why = "empty"
			if d := f.sf.Tag.Get("default"); d != "" {
				accepted += "; unset it for the default, " + d
			}
		}
		return fmt.Errorf("%s=%q is invalid: %s; accepted: %s", f.key, value, why, accepted)
	}
	t := dst.Type()
	switch {
	case t.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return bad("not true or false", "true or false (also 1 or 0)")
		}
		dst.SetBool(b)
	case t == reflect.TypeFor[time.Duration]():
		d, err := time.ParseDuration(value)
		if err != nil {
			return bad("not a duration", "a duration such as 90s, 5m or 1h")
		}
		dst.SetInt(int64(d))
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		x, err := strconv.ParseFloat(value, t.Bits())
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return bad("not a number", "a decimal number such as 1.5")
		}
		dst.SetFloat(x)
	default:
		r, _ := rangeOf(f)
		v, err := strconv.ParseInt(value, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return bad("out of range", r.accepted())
		case err != nil:
			why := "not a whole number"
			if d, derr := time.ParseDuration(value); derr == nil && r.seconds && d >= 0 && d%time.Second == 0 {
				why = fmt.Sprintf("not a whole number of seconds (%s would be %d)", value, d/time.Second)
			}
			return bad(why, r.accepted())
		}
		if dst.CanInt() {
			if dst.OverflowInt(v) {
				return bad("out of range", r.accepted())
			}
			dst.SetInt(v)
		} else {
			if v < 0 || dst.OverflowUint(uint64(v)) {
				return bad("out of range", r.accepted())
			}
			dst.SetUint(uint64(v))
		}
	}
	return nil
}

// checkRanges returns one error per integer variable of v (a struct read
// under prefix) outside its range.
func checkRanges(prefix string, v reflect.Value) []error {
	var errs []error
	for _, f := range fieldsOf(prefix, v.Type()) {
		r, ok := rangeOf(f)
		if !ok {
			continue
		}
		fv := v.FieldByIndex(f.sf.Index)
		var n int64
		var text string
		if fv.CanInt() {
			n, text = fv.Int(), strconv.FormatInt(fv.Int(), 10)
		} else {
			u := fv.Uint()
			n, text = int64(min(u, math.MaxInt64)), strconv.FormatUint(u, 10)
		}
		if n < r.min || n > r.max {
			errs = append(errs, fmt.Errorf("%s=%q is invalid: accepted: %s", f.key, text, r.accepted()))
		}
	}
	return errs
}

// seconds converts n seconds to a duration without wrapping around: beyond
// what a time.Duration holds it saturates. Validate keeps every value far
// inside; this guards a Config that was never validated.
func seconds(n int) time.Duration {
	const most = int64(math.MaxInt64 / time.Second)
	switch {
	case int64(n) > most:
		return time.Duration(math.MaxInt64)
	case int64(n) < -most:
		return time.Duration(math.MinInt64)
	}
	return time.Duration(n) * time.Second
}

// parseErrorMessage turns an error of envconfig.Process into the usual
// message (for a type process does not read itself).
func parseErrorMessage(err error) error {
	var pe *envconfig.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s=%q is invalid: accepted: %s", pe.KeyName, pe.Value, pe.TypeName)
	}
	return fmt.Errorf("reading %s_* environment: %w", Prefix, err)
}
