package verify

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/layercheck/layercheck/kubespray"
)

// BuiltinDefaultsRelease is the kubespray release whose defaults the node
// and cluster options carry in code (their Defaults methods).
const BuiltinDefaultsRelease = "v2.31.0"

// DefaultsRelease is the kubespray release whose defaults verify judges a
// host by: release when given (kubespray_version), else the newest bundled
// release with checksums for kubeVersion, else BuiltinDefaultsRelease. why
// says how it was chosen.
func DefaultsRelease(release, kubeVersion string) (rel, why string) {
	switch {
	case release != "":
		return kubespray.Resolve(release), "kubespray_version " + release
	case kubeVersion != "":
		if r := kubespray.ReleaseForKube(kubeVersion); r != "" {
			return r, "the newest bundled kubespray release with checksums for kube_version " + kubeVersion
		}
	}
	return BuiltinDefaultsRelease, ""
}

// ApplyReleaseDefaults applies to opts the defaults of the release the
// cluster was built with (DefaultsRelease) where they are not v2.31.0's,
// and says which release and why: "" when its defaults are v2.31.0's for
// every option left unset, or for a release not bundled (which
// CheckDefaultsRelease reports).
func ApplyReleaseDefaults(opts any, release, kubeVersion string) string {
	rel, why := DefaultsRelease(release, kubeVersion)
	if rel == BuiltinDefaultsRelease {
		return ""
	}
	cat, err := kubespray.Bundled(rel)
	if err != nil {
		return ""
	}
	builtin, err := kubespray.Bundled(BuiltinDefaultsRelease)
	if err != nil {
		return ""
	}
	v := reflect.ValueOf(opts).Elem()
	theirs, ours := reflect.New(v.Type()), reflect.New(v.Type())
	theirs.Elem().Set(v)
	ours.Elem().Set(v)
	ReleaseDefaults(theirs.Interface(), cat)
	ReleaseDefaults(ours.Interface(), builtin)
	if reflect.DeepEqual(theirs.Interface(), ours.Interface()) {
		return ""
	}
	v.Set(theirs.Elem())
	return "kubespray " + rel + "'s defaults (" + why + ")"
}

// ReleaseDefaults fills the unset fields of opts, a pointer to a struct
// whose json tags are kubespray variable names, with the defaults the
// release's catalogue gives as literals: a string that is no template, an
// int, an *int or a *bool. A bool cannot be told unset and is left; so is
// a variable the catalogue does not define or defines by a template (the
// Defaults methods derive those). It returns the variables it filled.
func ReleaseDefaults(opts any, cat *kubespray.Catalogue) []string {
	v := reflect.ValueOf(opts).Elem()
	t := v.Type()
	var filled []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		def := cat.Lookup(name)
		if name == "" || def == nil || def.Default == nil {
			continue
		}
		f := v.Field(i)
		switch x := def.Default.(type) {
		case string:
			if f.Kind() == reflect.String && f.String() == "" && !strings.Contains(x, "{{") && !strings.Contains(x, "{%") {
				f.SetString(x)
				filled = append(filled, name)
			}
		case int64:
			switch {
			case f.Kind() == reflect.Int && f.Int() == 0:
				f.SetInt(x)
				filled = append(filled, name)
			case f.Kind() == reflect.Pointer && f.IsNil() && f.Type().Elem().Kind() == reflect.Int:
				n := int(x)
				f.Set(reflect.ValueOf(&n))
				filled = append(filled, name)
			}
		case bool:
			if f.Kind() == reflect.Pointer && f.IsNil() && f.Type().Elem().Kind() == reflect.Bool {
				b := x
				f.Set(reflect.ValueOf(&b))
				filled = append(filled, name)
			}
		}
	}
	return filled
}

// CheckDefaultsRelease says why release (kubespray_version) cannot give
// defaults: it names no bundled kubespray catalogue.
func CheckDefaultsRelease(release string) error {
	if release == "" {
		return nil
	}
	if _, err := kubespray.Bundled(kubespray.Resolve(release)); err != nil {
		return fmt.Errorf("%q names no bundled kubespray release (%s)", release, strings.Join(kubespray.Versions(), ", "))
	}
	return nil
}
