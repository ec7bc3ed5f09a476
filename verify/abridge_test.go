package verify

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAbridge(t *testing.T) {
	var hosts []string
	for i := 1; i <= 1000; i++ {
		hosts = append(hosts, fmt.Sprintf("node%d", i))
	}
	assert.Equal(t, "node1, node2, node3", Abridge(hosts[:3]))
	assert.Equal(t, "node1, node2, node3, node4, node5, node6, node7, node8, node9, node10", Abridge(hosts[:10]))
	got := Abridge(hosts)
	assert.Equal(t, "node1, node2, node3, node4, node5, node6, node7, node8, node9, node10 and 990 more (1000 in all; full list in the JSON result)", got)
	assert.Less(t, len(got), 200)
	assert.Equal(t, "a: x, y; b", AbridgeSemi([]string{"a: x, y", "b"}))
	assert.Contains(t, AbridgeSemi(hosts[:11]), "node10; and 1 more (11 in all")
}
