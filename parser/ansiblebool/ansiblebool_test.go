package ansiblebool

import (
	"errors"
	"testing"
)

func TestSeriesNames(t *testing.T) {
	for s, want := range map[string]bool{"2.16": false, "2.18.19": false, "2.19": true, "2.19.3": true, "2.20": true, "3.0": true, "": true, "devel": true} {
		if got := from219(s); got != want {
			t.Errorf("from219(%q) = %v, want %v", s, got, want)
		}
	}
	if Series[len(Series)-1] != Newest {
		t.Errorf("Newest is %s, Series ends with %s", Newest, Series[len(Series)-1])
	}
}

func TestGoIntKinds(t *testing.T) {
	for _, v := range []any{1, int64(1)} {
		if r := Filter("2.20", v); !r.Value || r.Deprecated {
			t.Errorf("Filter(%T 1) = %+v", v, r)
		}
		if b, err := Boolean(v); !b || err != nil {
			t.Errorf("Boolean(%T 1) = %v, %v", v, b, err)
		}
	}
	var e NotBooleanError
	if _, err := Boolean("1.0"); !errors.As(err, &e) || err.Error() == "" {
		t.Errorf("Boolean(\"1.0\") = %v, want a NotBooleanError", err)
	}
}
