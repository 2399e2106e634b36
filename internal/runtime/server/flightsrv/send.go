package flightsrv

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/cqrs-spice/cqrs/internal/runtime/engine"
)

// memoFlight is the key of a result's encoded DoGet stream in its cache
// entry's memo.
const memoFlight = "flight.doget"

// encoded is a result as the messages of a DoGet stream: the schema message,
// then each record batch, exactly as flight.Writer sends them (same header and
// body bytes, no descriptor, no app metadata). The messages are read-only:
// gRPC marshals them for every stream that sends them.
type encoded struct {
	msgs []*flight.FlightData
}

// capture keeps copies of the messages a flight.Writer sends (the writer reuses
// its buffers between messages).
type capture struct {
	msgs []*flight.FlightData
	size int64
}

func (c *capture) Send(fd *flight.FlightData) error {
	m := &flight.FlightData{
		DataHeader:  append([]byte(nil), fd.DataHeader...),
		DataBody:    append([]byte(nil), fd.DataBody...),
		AppMetadata: append([]byte(nil), fd.AppMetadata...),
	}
	if len(m.AppMetadata) == 0 {
		m.AppMetadata = nil
	}
	if fd.FlightDescriptor != nil {
		m.FlightDescriptor = fd.FlightDescriptor
	}
	c.msgs = append(c.msgs, m)
	c.size += int64(len(m.DataHeader) + len(m.DataBody) + len(m.AppMetadata))
	return nil
}

// writeResult writes res's records to w (a stream, or a capture) as a Flight
// SQL DoGet answer: the schema with the Flight SQL column metadata, then every
// record batch. The schema goes out even when there are no rows.
func writeResult(w flight.DataStreamWriter, res *engine.Result) error {
	schema := withColumnMetadata(res.Schema)
	recs := withSchema(schema, res.Records)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	wr := flight.NewRecordWriter(w, ipc.WithSchema(schema))
	for _, r := range recs {
		if err := wr.Write(r); err != nil {
			wr.Close()
			return err
		}
	}
	return wr.Close()
}

// encode returns res encoded as the messages of its DoGet stream.
func encode(res *engine.Result) (*encoded, int64, error) {
	var c capture
	if err := writeResult(&c, res); err != nil {
		return nil, 0, err
	}
	return &encoded{msgs: c.msgs}, c.size, nil
}

// send answers a DoGet with res, releasing it. A result from the results cache
// is encoded once per cache entry and then sent as those same messages by
// every hit, so a hit encodes nothing; other results are encoded as they are
// written. The response headers (position, cache status) must be set before.
func send(ctx context.Context, stream flight.DataStreamWriter, res *engine.Result) error {
	defer res.Release()
	if res.Memo == nil {
		if err := writeResult(stream, res); err != nil {
			return err
		}
		return ctx.Err()
	}
	v, err := res.Memo.Load(memoFlight, func() (any, int64, error) {
		enc, size, err := encode(res)
		return enc, size, err
	})
	if err != nil {
		return err
	}
	for _, m := range v.(*encoded).msgs {
		if err := stream.Send(m); err != nil {
			return err
		}
	}
	return ctx.Err()
}
