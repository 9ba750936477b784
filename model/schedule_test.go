package model_test

import (
	"math"
	"testing"

	"mirrorql/model"
)

const (
	second    = model.Timestamp(1_000_000_000)
	minute    = 60 * second
	consensus = model.Timestamp(1_700_000_000) * second
)

func TestSignatureTypeName(t *testing.T) {
	tests := []struct {
		name string
		code *int16
		want string
	}{
		{"NULL", nil, "UNKNOWN"},
		{"0", ptr(int16(0)), "UNKNOWN"},
		{"1", ptr(int16(1)), "UNKNOWN"},
		{"2", ptr(int16(2)), "CONTRACT"},
		{"3", ptr(int16(3)), "ED25519"},
		{"4", ptr(int16(4)), "RSA_3072"},
		{"5", ptr(int16(5)), "ECDSA_384"},
		{"6", ptr(int16(6)), "ECDSA_SECP256K1"},
		{"7", ptr(int16(7)), "UNKNOWN"},
		{"-1", ptr(int16(-1)), "UNKNOWN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &model.Signature{Type: tt.code}
			if got := s.TypeName(); got != tt.want {
				t.Errorf("TypeName() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestScheduleIsFinal(t *testing.T) {
	expiry := consensus + 10*minute
	tests := []struct {
		name     string
		schedule model.Schedule
		now      model.Timestamp
		want     bool
	}{
		{"executed", model.Schedule{ConsensusTimestamp: consensus, ExecutedTimestamp: ptr(consensus + 1)}, consensus, true},
		{"deleted", model.Schedule{ConsensusTimestamp: consensus, Deleted: ptr(true)}, consensus, true},
		{"not deleted, fresh", model.Schedule{ConsensusTimestamp: consensus, Deleted: ptr(false)}, consensus, false},
		{"no expiration: 1 ns before 31 minutes", model.Schedule{ConsensusTimestamp: consensus}, consensus + 31*minute - 1, false},
		{"no expiration: at 31 minutes", model.Schedule{ConsensusTimestamp: consensus}, consensus + 31*minute, true},
		{"no expiration: 30 minutes is not enough", model.Schedule{ConsensusTimestamp: consensus}, consensus + 30*minute, false},
		{"expiration: 1 ns before 60 s after it", model.Schedule{ConsensusTimestamp: consensus, ExpirationTime: &expiry}, expiry + minute - 1, false},
		{"expiration: 60 s after it", model.Schedule{ConsensusTimestamp: consensus, ExpirationTime: &expiry}, expiry + minute, true},
		{"expiration: the 31 minutes do not apply", model.Schedule{ConsensusTimestamp: consensus, ExpirationTime: ptr(consensus + 60*minute)}, consensus + 31*minute, false},
		{"expiration near int64 max stays in the future", model.Schedule{ConsensusTimestamp: consensus, ExpirationTime: ptr(model.Timestamp(math.MaxInt64 - 1))}, consensus, false},
		{"consensus near int64 max stays in the future", model.Schedule{ConsensusTimestamp: math.MaxInt64 - second}, consensus, false},
		{"now at int64 max, expiry beyond it", model.Schedule{ExpirationTime: ptr(model.Timestamp(math.MaxInt64))}, math.MaxInt64, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.schedule.IsFinal(tt.now); got != tt.want {
				t.Errorf("IsFinal(%s) = %v, want %v", tt.now, got, tt.want)
			}
		})
	}
}

func TestScheduleStatus(t *testing.T) {
	expiry := consensus + 10*minute
	tests := []struct {
		name     string
		schedule model.Schedule
		now      model.Timestamp
		lifetime model.Timestamp
		want     model.ScheduleStatus
	}{
		{"executed beats deleted", model.Schedule{ExecutedTimestamp: ptr(consensus), Deleted: ptr(true)}, consensus, model.DefaultScheduleLifetime, model.ScheduleExecuted},
		{"executed beats expired", model.Schedule{ConsensusTimestamp: consensus, ExecutedTimestamp: ptr(consensus)}, consensus + 60*minute, model.DefaultScheduleLifetime, model.ScheduleExecuted},
		{"deleted", model.Schedule{ConsensusTimestamp: consensus, Deleted: ptr(true)}, consensus, model.DefaultScheduleLifetime, model.ScheduleDeleted},
		{"not deleted is pending", model.Schedule{ConsensusTimestamp: consensus, Deleted: ptr(false)}, consensus, model.DefaultScheduleLifetime, model.SchedulePending},
		{"expiration: 1 ns before", model.Schedule{ConsensusTimestamp: consensus, ExpirationTime: &expiry}, expiry - 1, model.DefaultScheduleLifetime, model.SchedulePending},
		{"expiration: at it", model.Schedule{ConsensusTimestamp: consensus, ExpirationTime: &expiry}, expiry, model.DefaultScheduleLifetime, model.ScheduleExpired},
		{"lifetime: 1 ns before 1800 s", model.Schedule{ConsensusTimestamp: consensus}, consensus + 30*minute - 1, model.DefaultScheduleLifetime, model.SchedulePending},
		{"lifetime: at 1800 s", model.Schedule{ConsensusTimestamp: consensus}, consensus + 30*minute, model.DefaultScheduleLifetime, model.ScheduleExpired},
		{"custom lifetime", model.Schedule{ConsensusTimestamp: consensus}, consensus + minute, minute, model.ScheduleExpired},
		{"lifetime ignored with an expiration", model.Schedule{ConsensusTimestamp: consensus, ExpirationTime: ptr(consensus + 60*minute)}, consensus + 30*minute, model.DefaultScheduleLifetime, model.SchedulePending},
		{"negative lifetime past int64 min is expired", model.Schedule{ConsensusTimestamp: math.MinInt64 + 1}, math.MinInt64, -second, model.ScheduleExpired},
		{"consensus near int64 max stays pending", model.Schedule{ConsensusTimestamp: math.MaxInt64 - second}, consensus, model.DefaultScheduleLifetime, model.SchedulePending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.schedule.Status(tt.now, tt.lifetime); got != tt.want {
				t.Errorf("Status(%s, %s) = %s, want %s", tt.now, tt.lifetime, got, tt.want)
			}
		})
	}
	if model.DefaultScheduleLifetime != 30*minute {
		t.Errorf("DefaultScheduleLifetime = %s, want 1800 s", model.DefaultScheduleLifetime)
	}
}
