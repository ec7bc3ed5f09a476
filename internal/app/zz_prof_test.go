package app

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestZZProf(t *testing.T) {
	inv := os.Getenv("PROF_INV")
	if inv == "" {
		t.Skip()
	}
	n, _ := strconv.Atoi(os.Getenv("PROF_N"))
	args := strings.Fields(os.Getenv("PROF_ARGS"))
	for i := 0; i < max(n, 1); i++ {
		var out, errOut bytes.Buffer
		Run(context.Background(), append(args, "-i", inv), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	}
}
