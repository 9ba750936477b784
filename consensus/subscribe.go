package consensus

import (
	"context"
	"errors"
	"math"
	"math/big"
	"strconv"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"mirrorql/app"
	"mirrorql/consensus/mirrorpb"
	"mirrorql/live"
	"mirrorql/model"
)

// subscriber answers ConsensusService.
type subscriber struct {
	app Topics
	o   Options
}

// SubscribeTopic is the mirror node's subscribeTopic: the query's checks in
// its order (the filter, then the topic), then the hub's stream of the
// topic's messages, history then live.
func (s *subscriber) SubscribeTopic(ctx context.Context, req *connect.Request[mirrorpb.ConsensusTopicQuery], out *connect.ServerStream[mirrorpb.ConsensusTopicResponse]) error {
	r, err := s.request(req.Msg)
	if err != nil {
		return statusOf(err)
	}
	if err := s.app.FollowableTopic(ctx, r.Topic); err != nil {
		return statusOf(err)
	}
	hub := s.o.Hub
	if hub == nil {
		return status(connect.CodeUnimplemented, "Live topic messages are turned off on this server")
	}
	if c := connOf(ctx); c != nil {
		if int(c.n.Add(1)) > s.o.MaxPerConnection {
			c.n.Add(-1)
			return status(connect.CodeResourceExhausted, "At most "+strconv.Itoa(s.o.MaxPerConnection)+" subscriptions per connection")
		}
		defer c.n.Add(-1)
	}
	sub, err := hub.Subscribe(r)
	switch {
	case errors.Is(err, live.ErrTooMany):
		return status(connect.CodeResourceExhausted, "The server follows as many subscriptions as it can; retry later")
	case err != nil:
		return status(connect.CodeUnavailable, "The server is shutting down; subscribe again")
	}
	startStream(ctx)
	err = sub.Run(ctx, func(m *model.TopicMessage) error { return out.Send(response(m)) })
	ended := sub.Ended(err)
	sub.Close(err)
	var lerr *live.Error
	switch {
	case ended == live.EndedShutdown:
		// The SDKs resubscribe after UNAVAILABLE from the last message they
		// got; a completed stream would be the end of their query.
		return status(connect.CodeUnavailable, "The server is shutting down; subscribe again")
	case errors.As(err, &lerr):
		return status(liveCode(lerr.Code), lerr.Message)
	case err != nil && ctx.Err() != nil:
		return connect.NewError(connect.CodeCanceled, err)
	}
	return err
}

// request reads q as the mirror node does (ConsensusController): a start
// time absent means now and a present one (epoch 0 included) means from
// then; the limit is Java's long of the uint64, so one past 2^63 is
// negative and refused as such.
func (s *subscriber) request(q *mirrorpb.ConsensusTopicQuery) (app.Subscription, error) {
	if q.TopicID == nil {
		return app.Subscription{}, app.Invalid("topicId: must not be null")
	}
	topic, err := app.TopicOf(q.TopicID.ShardNum, q.TopicID.RealmNum, q.TopicID.TopicNum)
	if err != nil {
		return app.Subscription{}, err
	}
	now := model.Timestamp(s.o.Now().UnixNano())
	sub := app.Subscription{Topic: topic, Start: now, Limit: int64(q.Limit)} //nolint:gosec // Java's reading
	if q.ConsensusStartTime != nil {
		sub.Start = nanos(q.ConsensusStartTime)
	}
	if q.ConsensusEndTime != nil {
		sub.End = nanos(q.ConsensusEndTime)
	}
	if err := sub.Check(q.ConsensusEndTime != nil, now); err != nil {
		return app.Subscription{}, err
	}
	return sub, nil
}

// nanos is t in nanoseconds since the epoch, saturated where it would
// overflow (the mirror node's timestampInNanosMax).
func nanos(t *mirrorpb.Timestamp) model.Timestamp {
	v := new(big.Int).Mul(big.NewInt(t.Seconds), big.NewInt(1e9))
	v.Add(v, big.NewInt(int64(t.Nanos)))
	switch {
	case v.IsInt64():
		return model.Timestamp(v.Int64())
	case v.Sign() > 0:
		return math.MaxInt64
	}
	return math.MinInt64
}

// timestamp is ts as a protobuf Timestamp (nanos always in [0, 1e9)).
func timestamp(ts model.Timestamp) *mirrorpb.Timestamp {
	s, n := int64(ts)/1e9, int64(ts)%1e9
	if n < 0 {
		s, n = s-1, n+1e9
	}
	return &mirrorpb.Timestamp{Seconds: s, Nanos: int32(n)} //nolint:gosec // n < 1e9
}

// response is m as the mirror node sends it: runningHashVersion 3 when the
// column is null, chunkInfo only on a chunk.
func response(m *model.TopicMessage) *mirrorpb.ConsensusTopicResponse {
	r := &mirrorpb.ConsensusTopicResponse{
		ConsensusTimestamp: timestamp(m.ConsensusTimestamp),
		Message:            m.Message,
		RunningHash:        m.RunningHash,
		SequenceNumber:     uint64(m.SequenceNumber), //nolint:gosec // positive in the ledger
		RunningHashVersion: uint64(m.Version()),      //nolint:gosec // small and positive
	}
	if m.ChunkNum != nil {
		c := &mirrorpb.ConsensusMessageChunkInfo{Number: *m.ChunkNum, InitialTransactionID: initialTransactionID(m)}
		if m.ChunkTotal != nil {
			c.Total = *m.ChunkTotal
		}
		r.ChunkInfo = c
	}
	return r
}

// initialTransactionID is the chunk's first transaction: the importer's
// protobuf bytes when they parse, else one made of the payer and valid
// start columns of older rows; nil when neither is there.
func initialTransactionID(m *model.TopicMessage) *mirrorpb.TransactionID {
	if m.InitialTransactionID != nil {
		id := &mirrorpb.TransactionID{}
		if proto.Unmarshal(m.InitialTransactionID, id) == nil {
			return id
		}
	}
	if m.PayerAccountID == nil || m.ValidStartTimestamp == nil {
		return nil
	}
	p := *m.PayerAccountID
	return &mirrorpb.TransactionID{
		AccountID: &mirrorpb.AccountID{ShardNum: p.Shard(), RealmNum: p.Realm(),
			Account: &mirrorpb.AccountID_AccountNum{AccountNum: p.Num()}},
		TransactionValidStart: timestamp(*m.ValidStartTimestamp),
	}
}

func status(code connect.Code, msg string) *connect.Error {
	return connect.NewError(code, errors.New(msg))
}

// statusOf maps app's errors to gRPC statuses: the mirror node's
// INVALID_ARGUMENT and NOT_FOUND, UNAVAILABLE for the database.
func statusOf(err error) error {
	var bad *app.BadRequest
	var nf *app.NotFound
	switch {
	case errors.As(err, &bad):
		return status(connect.CodeInvalidArgument, bad.Error())
	case errors.As(err, &nf):
		return status(connect.CodeNotFound, nf.Message)
	case errors.Is(err, context.Canceled):
		return connect.NewError(connect.CodeCanceled, err)
	}
	return status(connect.CodeUnavailable, app.UnavailableMessage)
}

// liveCode is the status of a stream the hub ended: the mirror node's
// DEADLINE_EXCEEDED for a client that lags, UNAVAILABLE for the database.
func liveCode(code string) connect.Code {
	switch code {
	case live.CodeClientTooSlow:
		return connect.CodeDeadlineExceeded
	case live.CodeUnavailable:
		return connect.CodeUnavailable
	}
	return connect.CodeInternal
}
