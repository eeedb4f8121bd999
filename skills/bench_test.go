package skills

import "testing"

// benchInputs are realistic requests of the lengths agents send.
var benchInputs = []string{
	"tracking status for order ORD-1007?",
	"Please refund order ORD-1004, the customer was charged twice",
	"can you change the shipping address for ORD-1001 to 12 Elm St",
	"Hi team, Jane Doe called about ORD-1004: her Visa was charged twice last Tuesday at checkout, please refund the duplicate",
	"email the customer of ORD-1004 that their parcel is delayed",
	"what's the weather in Paris",
}

func BenchmarkRoute(b *testing.B) {
	r := demoRouter(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r.Route(benchInputs[i%len(benchInputs)], "")
		i++
	}
}

// BenchmarkRouteLoad is the load-test request: a short status question.
func BenchmarkRouteLoad(b *testing.B) {
	r := demoRouter(b)
	b.ReportAllocs()
	for b.Loop() {
		r.Route("where is my order ORD-1003", "")
	}
}

func BenchmarkRouteParallel(b *testing.B) {
	r := demoRouter(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r.Route(benchInputs[i%len(benchInputs)], "")
			i++
		}
	})
}

func BenchmarkExtract(b *testing.B) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		Extract(benchInputs[i%len(benchInputs)])
		i++
	}
}

func BenchmarkNewRouter(b *testing.B) {
	skills := Demo()
	b.ReportAllocs()
	for b.Loop() {
		NewRouter(skills, DefaultThreshold)
	}
}
