package output

import (
	"encoding/json"
	"io"
)

// JSON of any report (lint, node, cluster, fleet): the report's own
// structure, indented by two spaces, ending with a newline. Its keys are
// snake_case so playbooks can reach them.

func writeJSON(w io.Writer, rep any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
