package output

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/layercheck/layercheck/lint"
)

// SARIF 2.1.0 of a lint report, for GitHub code scanning, which shows each
// finding on its file:line:col with the rule's metadata.

// SARIFVersion and SARIFSchema are the SARIF version written and the
// schema it names (OASIS SARIF 2.1.0, errata 01).
const (
	SARIFVersion = "2.1.0"
	SARIFSchema  = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)

// SARIFBaseID is the uriBaseId of every finding's file: the directory the
// locations are relative to (the inventory directory).
const SARIFBaseID = "INVENTORYROOT"

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool               sarifTool                  `json:"tool"`
	OriginalURIBaseIDs map[string]sarifArtifact   `json:"originalUriBaseIds,omitempty"`
	Results            []sarifResult              `json:"results"`
	Properties         map[string]json.RawMessage `json:"properties,omitempty"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri,omitempty"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string            `json:"id"`
	Name                 string            `json:"name"`
	ShortDescription     sarifText         `json:"shortDescription"`
	DefaultConfiguration sarifRuleConfig   `json:"defaultConfiguration"`
	Properties           map[string]string `json:"properties,omitempty"`
}

type sarifRuleConfig struct {
	Level string `json:"level"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifResult struct {
	RuleID     string          `json:"ruleId"`
	RuleIndex  int             `json:"ruleIndex"`
	Level      string          `json:"level"`
	Message    sarifText       `json:"message"`
	Locations  []sarifLocation `json:"locations,omitempty"`
	Properties map[string]any  `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
	Message          *sarifText     `json:"message,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
}

type sarifLogical struct {
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
}

// SARIFLevel is SARIF's level for a lint severity.
func SARIFLevel(s lint.Severity) string {
	switch s {
	case lint.SeverityError:
		return "error"
	case lint.SeverityWarning:
		return "warning"
	}
	return "note"
}

// SplitWhere splits a finding's Where ("group_vars/all/all.yml:12:15",
// "hosts.ini:7", "-e") into file, line and column (0 when absent).
func SplitWhere(where string) (file string, line, col int) {
	file = where
	var nums []int // from the right
	for len(nums) < 2 {
		j := strings.LastIndexByte(file, ':')
		if j < 0 {
			break
		}
		n, err := strconv.Atoi(file[j+1:])
		if err != nil || n <= 0 {
			break
		}
		nums = append(nums, n)
		file = file[:j]
	}
	switch len(nums) {
	case 1:
		line = nums[0]
	case 2:
		line, col = nums[1], nums[0]
	}
	return file, line, col
}

// WriteLintSARIF writes rep as a SARIF 2.1.0 log: every lint rule with its
// metadata, a result per finding at its file:line:col relative to baseDir
// (the directory the report's locations are relative to); findings from
// -e have no file and carry the extra vars as a logical location.
func WriteLintSARIF(w io.Writer, rep *lint.Report, baseDir, version string) error {
	rules := lint.Rules()
	index := map[string]int{}
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "layercheck", InformationURI: "https://github.com/layercheck/layercheck", Version: version}}, Results: []sarifResult{}}
	for i, r := range rules {
		index[r.ID] = i
		sevs := make([]string, len(r.Severities))
		for j, s := range r.Severities {
			sevs[j] = string(s)
		}
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: r.ID, Name: r.ID,
			ShortDescription:     sarifText{Text: r.Summary},
			DefaultConfiguration: sarifRuleConfig{Level: SARIFLevel(r.Severity)},
			Properties:           map[string]string{"severities": strings.Join(sevs, "|")}})
	}
	if abs, err := filepath.Abs(baseDir); err == nil {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs) + "/"}
		run.OriginalURIBaseIDs = map[string]sarifArtifact{SARIFBaseID: {URI: u.String()}}
	}
	if rep.Catalogue != "" {
		cat, _ := json.Marshal(rep.Catalogue)
		run.Properties = map[string]json.RawMessage{"catalogue": cat}
	}
	for _, f := range rep.Findings {
		i, ok := index[f.Rule]
		if !ok {
			return fmt.Errorf("lint finding of unknown rule %q", f.Rule)
		}
		msg := f.Message
		if f.Fix != "" {
			msg += " Fix: " + f.Fix
		}
		res := sarifResult{RuleID: f.Rule, RuleIndex: i, Level: SARIFLevel(f.Severity), Message: sarifText{Text: msg}}
		props := map[string]any{}
		if f.Variable != "" {
			props["variable"] = f.Variable
		}
		if f.Value != "" {
			props["value"] = f.Value
		}
		if len(f.Hosts) > 0 {
			props["hosts"] = f.Hosts
		}
		if f.Why != "" {
			props["why"] = f.Why
		}
		if len(props) > 0 {
			res.Properties = props
		}
		file, line, col := SplitWhere(f.Where)
		switch {
		case f.Where == "-e" || strings.HasPrefix(f.Where, "-e"):
			res.Locations = []sarifLocation{{LogicalLocations: []sarifLogical{{Name: "extra vars (-e)", Kind: "variable"}}}}
		case file != "":
			art := sarifArtifact{URI: uriPath(file), URIBaseID: SARIFBaseID}
			if filepath.IsAbs(file) { // outside the inventory: a file URI of its own
				art = sarifArtifact{URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(file)}).String()}
			}
			pl := &sarifPhysical{ArtifactLocation: art}
			if line > 0 {
				pl.Region = &sarifRegion{StartLine: line, StartColumn: col}
			}
			res.Locations = []sarifLocation{{PhysicalLocation: pl}}
		}
		run.Results = append(run.Results, res)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: SARIFSchema, Version: SARIFVersion, Runs: []sarifRun{run}})
}

// uriPath is a relative file path as a URI reference (slashes, escaped).
func uriPath(p string) string {
	u := url.URL{Path: filepath.ToSlash(p)}
	return u.EscapedPath()
}

// LintBaseDir is the directory a lint report's locations are relative
// to: LocationsRelativeTo when the sources are in different directories,
// else the inventory directory (a directory source, or a file source's
// directory).
func LintBaseDir(rep *lint.Report, sources []string) string {
	if rep.LocationsRelativeTo != "" {
		return rep.LocationsRelativeTo
	}
	if len(sources) == 0 {
		return "."
	}
	if fi, err := os.Stat(sources[0]); err == nil && fi.IsDir() {
		return sources[0]
	}
	return filepath.Dir(sources[0])
}
