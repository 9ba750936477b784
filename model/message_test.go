package model_test

import (
	"testing"

	"mirrorql/model"
)

func TestTopicMessageVersion(t *testing.T) {
	tests := []struct {
		name string
		in   *int16
		want int16
	}{
		{"NULL is 3", nil, 3},
		{"2", ptr(int16(2)), 2},
		{"3", ptr(int16(3)), 3},
		{"0 is kept", ptr(int16(0)), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &model.TopicMessage{RunningHashVersion: tt.in}
			if got := m.Version(); got != tt.want {
				t.Errorf("Version() = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestTopicMessageChunk(t *testing.T) {
	spec := mustHex(t, "0a0608d285d8cc041202180318012001")
	payer := model.EntityID(10)
	start := model.Timestamp(1234567890000000000)
	tests := []struct {
		name      string
		msg       model.TopicMessage
		want      bool // chunk_info present
		number    int32
		total     *int32 // nil: chunk_total is NULL
		account   *string
		nonce     *int32
		scheduled *bool
		start     *string
	}{
		{"not chunked", model.TopicMessage{InitialTransactionID: spec, PayerAccountID: &payer}, false, 0, nil, nil, nil, nil, nil},
		{"protobuf initial transaction id", model.TopicMessage{ChunkNum: ptr(int32(1)), ChunkTotal: ptr(int32(2)), InitialTransactionID: spec, PayerAccountID: &payer, ValidStartTimestamp: ptr(model.Timestamp(5))},
			true, 1, ptr(int32(2)), ptr("0.0.3"), ptr(int32(1)), ptr(true), ptr("1234567890.000000000")},
		{"legacy columns", model.TopicMessage{ChunkNum: ptr(int32(2)), ChunkTotal: ptr(int32(2)), PayerAccountID: &payer, ValidStartTimestamp: &start},
			true, 2, ptr(int32(2)), ptr("0.0.10"), nil, nil, ptr("1234567890.000000000")},
		{"legacy without valid start", model.TopicMessage{ChunkNum: ptr(int32(1)), ChunkTotal: ptr(int32(1)), PayerAccountID: &payer},
			true, 1, ptr(int32(1)), ptr("0.0.10"), nil, nil, nil},
		{"NULL total", model.TopicMessage{ChunkNum: ptr(int32(1)), InitialTransactionID: spec},
			true, 1, nil, ptr("0.0.3"), ptr(int32(1)), ptr(true), ptr("1234567890.000000000")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.msg.Chunk()
			if (c != nil) != tt.want {
				t.Fatalf("Chunk() = %+v, want present %v", c, tt.want)
			}
			if c == nil {
				return
			}
			if c.Number != tt.number || !equalPtr(c.Total, tt.total) {
				t.Errorf("number/total = %d/%s, want %d/%s", c.Number, showPtr(c.Total), tt.number, showPtr(tt.total))
			}
			id := c.InitialTransactionID
			if !equalPtr(id.AccountID, tt.account) || !equalPtr(id.Nonce, tt.nonce) ||
				!equalPtr(id.Scheduled, tt.scheduled) || !equalPtr(id.ValidStart, tt.start) {
				t.Errorf("initial transaction id = %s %s %s %s, want %s %s %s %s",
					showPtr(id.AccountID), showPtr(id.Nonce), showPtr(id.Scheduled), showPtr(id.ValidStart),
					showPtr(tt.account), showPtr(tt.nonce), showPtr(tt.scheduled), showPtr(tt.start))
			}
		})
	}
}
