package config

// RangeOf returns the accepted range of the integer variable key (e.g.
// LEASHD_APPROVAL_TIMEOUT_SECONDS), for tests.
func RangeOf(key string) (lo, hi int64, ok bool) {
	for _, f := range fields() {
		if f.key == key {
			r, ok := rangeOf(f)
			return r.min, r.max, ok
		}
	}
	return 0, 0, false
}
