package parser

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAllSized reads everything whatever its size hint says, as io.ReadAll.
func TestReadAllSized(t *testing.T) {
	text := strings.Repeat("0123456789", 300)
	for _, hint := range []int64{0, 1, 511, 512, 2999, 3000, 3001, 10000} {
		for name, r := range map[string]io.Reader{
			"plain":    strings.NewReader(text),
			"one byte": iotest.OneByteReader(strings.NewReader(text)),
			"half":     iotest.HalfReader(strings.NewReader(text)),
		} {
			got, err := readAllSized(r, hint)
			if err != nil || !bytes.Equal(got, []byte(text)) {
				t.Fatalf("hint %d, %s reader: %d bytes, %v", hint, name, len(got), err)
			}
		}
	}
	boom := errors.New("boom")
	if _, err := readAllSized(iotest.ErrReader(boom), 10); !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
}
