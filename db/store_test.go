package db_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"mirrorql/app"
	"mirrorql/db"
)

func TestAppError(t *testing.T) {
	if db.AppError(nil) != nil {
		t.Error("nil mapped")
	}
	if err := db.AppError(fmt.Errorf("message 1 of topic 0.0.7: %w", db.ErrNotFound)); err != app.ErrNotFound || !app.IsNotFound(err) {
		t.Errorf("not found mapped to %v", err)
	}
	cause := errors.New("canceling statement due to statement timeout")
	var u *app.Unavailable
	if err := db.AppError(cause); !errors.As(err, &u) || u.Cause != cause || u.Outage() || !errors.Is(err, cause) {
		t.Errorf("failure mapped to %#v", err)
	}
	down := &pgconn.ConnectError{}
	if err := db.AppError(down); !errors.As(err, &u) || !u.Outage() {
		t.Errorf("unreachable database mapped to %#v", err)
	}
	if err := db.AppError(u); err != u {
		t.Errorf("an Unavailable mapped again: %#v", err)
	}
}
