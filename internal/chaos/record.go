package chaos

import (
	"time"

	"github.com/cqrs-spice/cqrs/internal/position"
)

// The api's endpoints the workload uses; the keys of every per-endpoint map.
const (
	EndpointOrders       = "/orders"
	EndpointRanking      = "/ranking"
	EndpointAccelerated  = "/ranking-accelerated"
	EndpointMaterialized = "/ranking-materialized"
)

// Endpoints lists the api's endpoints in report order.
var Endpoints = []string{EndpointOrders, EndpointRanking, EndpointAccelerated, EndpointMaterialized}

// RankingEndpoints are the three ways to read the top 5.
var RankingEndpoints = []string{EndpointRanking, EndpointAccelerated, EndpointMaterialized}

// Ack is an order the api acknowledged with 201: it must be durable.
type Ack struct {
	ID        int64
	ProductID int64
	Count     int64
	Position  position.LSN // the Spice-Position of the answer: the write's token
	At        time.Time
}

// Read is one answer (or failure) a reader or the writer got.
type Read struct {
	Reader      string // one reader issues its requests one after another
	Endpoint    string
	At          time.Time     // when the request was sent
	Took        time.Duration // until the answer, or the failure
	Status      int           // HTTP status; 0 when no answer came (connection refused, timeout)
	MinPosition position.LSN  // the Spice-Min-Position sent; zero when none
	Position    position.LSN  // the Spice-Position answered; zero when none
}

// OK reports whether the answer was a 2xx.
func (r Read) OK() bool { return r.Status >= 200 && r.Status < 300 }

// WatermarkSample is one dataset's watermark as a runtime reported it.
type WatermarkSample struct {
	Runtime   string
	Dataset   string
	At        time.Time
	Watermark position.LSN
}

// Tally is one product's orders: COUNT(*) and SUM(count).
type Tally struct {
	Orders int64
	Sum    int64
}

// RankRow is one row of a ranking: a product name and its total, null when the
// product has no orders.
type RankRow struct {
	Name  string `json:"name"`
	Count *int64 `json:"count"`
}

// State is what the stack holds after a round's quiet period.
type State struct {
	// PostgresIDs and AcceleratedIDs count the copies of each order id: at least
	// every acknowledged id, plus every id with more than one copy.
	PostgresIDs    map[int64]int
	AcceleratedIDs map[int64]int
	// Postgres and Accelerated are the tallies per product id.
	Postgres    map[int64]Tally
	Accelerated map[int64]Tally
	// Products names the products by id, from Postgres.
	Products map[int64]string
	// Rankings holds what each ranking endpoint answered (JSON rows), by
	// endpoint; a missing endpoint did not answer 200.
	Rankings map[string][]RankRow
}
