package parser

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadFileRefusesSpecialFilesAndBigFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	_, err := ReadFile(fifo, 0)
	var ke *FileKindError
	require.True(t, errors.As(err, &ke), "%v", err)
	assert.Equal(t, fifo+": is a FIFO, not a file", err.Error())

	_, err = ReadFile("/dev/null", 0)
	assert.EqualError(t, err, "/dev/null: is a character device, not a file")
	_, err = ReadFile(dir, 0)
	assert.EqualError(t, err, dir+": is a directory, not a file")

	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("a", 100)), 0o644))
	_, err = ReadFile(big, 99)
	var se *FileSizeError
	require.True(t, errors.As(err, &se), "%v", err)
	b, err := ReadFile(big, 100)
	require.NoError(t, err)
	assert.Len(t, b, 100)
}

func TestYAMLErrorsCarryTheirPlace(t *testing.T) {
	cases := []struct{ src, want string }{
		{"all:\n  vars:\n    a: &x 1\n    b: *y\n", `f.yml:4:8: found undefined alias "y"`},
		{"a: 1\nb: \"caf\xe9\"\n", "f.yml:2:8: invalid UTF-8 (byte 0xe9): ansible-core reads YAML files as UTF-8"},
		{"a: 1\nb: x\x00\n", "f.yml:2:5: control character NUL (U+0000) is not allowed in YAML"},
		{"a: 1\nb: x\x01\n", "f.yml:2:5: control character U+0001 is not allowed in YAML"},
		{"x: " + strings.Repeat("[", MaxNestingDepth+1) + strings.Repeat("]", MaxNestingDepth+1) + "\n",
			"f.yml:1:163: maximum nesting depth exceeded"},
		{`{"x": ` + strings.Repeat("[", MaxNestingDepth) + strings.Repeat("]", MaxNestingDepth) + "}",
			"f.yml:1:166: maximum nesting depth exceeded"},
	}
	for _, c := range cases {
		_, err := loadData("f.yml", []byte(c.src), nil)
		require.Error(t, err, "%q", c.src)
		assert.Contains(t, err.Error(), c.want)
	}
	// the deepest document allowed loads
	_, err := loadData("f.yml", []byte("x: "+strings.Repeat("[", MaxNestingDepth-1)+strings.Repeat("]", MaxNestingDepth-1)+"\n"), nil)
	assert.NoError(t, err)
}

func TestHostLimitAndVaultSource(t *testing.T) {
	dir := t.TempDir()
	ini := filepath.Join(dir, "hosts.ini")
	require.NoError(t, os.WriteFile(ini, []byte("[g]\na[0:9]\nb[0:9]\n"), 0o644))
	old := MaxHosts
	MaxHosts = 15
	defer func() { MaxHosts = old }()
	_, err := Load(ini)
	var he *HostLimitError
	require.True(t, errors.As(err, &he), "%v", err)
	assert.Equal(t, ini+":3:1", he.Pos.String())

	vault := filepath.Join(dir, "vault.yml")
	require.NoError(t, os.WriteFile(vault, []byte("$ANSIBLE_VAULT;1.1;AES256\n6162\n"), 0o644))
	_, err = Load(vault)
	var srcErr *SourceError
	require.True(t, errors.As(err, &srcErr), "%v", err)
	assert.True(t, srcErr.Vault)
	inv, err := LoadWith(LoadOptions{UnparsedIsWarning: true}, vault)
	require.NoError(t, err)
	assert.Empty(t, inv.Hosts, "no bogus host from the vault text")
	assert.Contains(t, strings.Join(inv.Warnings, "\n"), "whole-file ansible-vault inventory ($ANSIBLE_VAULT;1.1;AES256)")
}
