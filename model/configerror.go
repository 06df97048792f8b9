package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// configError turns a YAML/JSON decoding error of a configuration a person
// wrote (meshNetworks, mesh config) into a sentence about their document:
// "networks.endpoints: want a list, got a string" rather than Go's "cannot
// unmarshal string into Go struct field MeshNetwork.networks.endpoints of
// type []model.MeshNetworkEndpoint", and a YAML syntax error without
// the converter's prefixes.
func configError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		where := te.Field
		if where == "" {
			where = "the document"
		}
		return fmt.Errorf("%s: want %s, got %s", where, describeType(te.Type), describeValue(te.Value))
	}
	msg := err.Error()
	for _, p := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	switch {
	case strings.Contains(msg, "map key"):
		// The YAML-to-JSON converter's words for `{[a]: b}` or `{null: b}`
		// print Go values ("invalid map key: []interface {}{}").
		return errors.New("a mapping key is a list, a mapping or null: keys must be plain names")
	case strings.Contains(msg, "interface {}") || strings.Contains(msg, "%!") || strings.Contains(msg, "Go "):
		return errors.New("a value is of a kind this configuration does not take")
	}
	return errors.New(msg)
}

func describeType(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	case reflect.Pointer:
		return describeType(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("a whole number from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another value"
}

// describeValue reads encoding/json's name for what it found.
func describeValue(v string) string {
	switch v {
	case "array":
		return "a list"
	case "object":
		return "a mapping"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	}
	return v // "number", "number -1"
}
