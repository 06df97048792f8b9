package xdsclient

import (
	"fmt"
	"testing"

	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	"google.golang.org/protobuf/proto"
)

// BenchmarkEDSParts splits BenchmarkEDSPush10k into its decode and diff
// halves, to see which one a regression is in.
func BenchmarkEDSParts(b *testing.B) {
	eps := make([]ep, 10000)
	for i := range eps {
		eps[i] = ep{fmt.Sprintf("10.%d.%d.%d", i/65536, (i/256)%256, i%256), 5000, 1, fmt.Sprintf("hw-%d;sample;helloworld;v1;cluster1", i)}
	}
	raw := mustMarshalB(b, cla(helloEDS, eps...))
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for i := 0; i < b.N; i++ {
			if _, err := decodeCLAFast(raw, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A push where 1% of the endpoints changed, decoded against the
	// previous state (what the client does): unchanged endpoints are reused.
	prevLA, _ := decodeCLAFast(raw, nil)
	eps[5000].weight = 3
	raw2 := mustMarshalB(b, cla(helloEDS, eps...))
	b.Run("decode-reuse", func(b *testing.B) {
		b.SetBytes(int64(len(raw2)))
		prev := func(string) *LoadAssignment { return &prevLA }
		for i := 0; i < b.N; i++ {
			if _, err := decodeCLAFast(raw2, prev); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The generic path (what decodeResource falls back to), for comparison.
	b.Run("proto-unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for i := 0; i < b.N; i++ {
			var m endpoint.ClusterLoadAssignment
			if err := proto.Unmarshal(raw, &m); err != nil {
				b.Fatal(err)
			}
			if _, err := decodeLoadAssignment(&m); err != nil {
				b.Fatal(err)
			}
		}
	})
	old, _ := decodeCLAFast(raw, nil)
	cur, _ := decodeCLAFast(raw, nil)
	for i := 0; i < len(cur.Endpoints); i += 100 {
		cur.Endpoints[i].Weight = 3
	}
	b.Run("diff", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if len(diffEndpoints(old, cur)) != 100 {
				b.Fatal("diff")
			}
		}
	})
	b.Run("copy", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_ = string(raw)
		}
	})
}
