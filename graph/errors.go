package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"mirrorql/db"
)

// Codes (extensions.code) of the errors that are not the client's argument
// mistakes.
const (
	CodeUnavailable = "SERVICE_UNAVAILABLE"
	CodeInternal    = "INTERNAL_SERVER_ERROR"
)

// unavailable is a query-layer failure: the client sees REST's generic
// `Service unavailable` (DECISIONS #9), the log sees the cause.
type unavailable struct{ cause error }

func (u *unavailable) Error() string { return "database: " + u.cause.Error() }
func (u *unavailable) Unwrap() error { return u.cause }

func dbError(err error) error { return &unavailable{cause: err} }

// presentError maps errors to the wire once: argument errors as they are,
// database errors to `Service unavailable` (logged), anything unexpected to
// `Internal error` (logged).
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		var u *unavailable
		if errors.As(err, &u) {
			if !db.Unavailable(u.cause) { // an outage is logged once per change of state by db.Health
				log.Error("graphql: query failed", "path", graphql.GetPath(ctx).String(), "err", u.cause)
			}
			return &gqlerror.Error{Message: "Service unavailable", Path: graphql.GetPath(ctx),
				Extensions: map[string]any{"code": CodeUnavailable}}
		}
		return graphql.DefaultErrorPresenter(ctx, err)
	}
}

func recoverPanic(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, p any) error {
		log.Error("graphql: panic", "path", graphql.GetPath(ctx).String(), "panic", fmt.Sprint(p))
		return &gqlerror.Error{Message: "Internal error", Extensions: map[string]any{"code": CodeInternal}}
	}
}
