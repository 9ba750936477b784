package graph

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"mirrorql/app"
)

// Codes (extensions.code) of app's errors.
const (
	CodeBadUserInput = "BAD_USER_INPUT"
	CodeNotFound     = "NOT_FOUND"
	CodeUnavailable  = "SERVICE_UNAVAILABLE"
	CodeInternal     = "INTERNAL_SERVER_ERROR"
)

func coded(code, msg string) *gqlerror.Error {
	return &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": code}}
}

func badInput(msg string) *gqlerror.Error { return coded(CodeBadUserInput, msg) }

// fieldError is a resolver's error for err. A BadRequest reports every
// message, as a REST 400 body does: all but the last are added to the
// response and the last nulls the field. The others are presentError's.
func fieldError(ctx context.Context, err error) error {
	var br *app.BadRequest
	if !errors.As(err, &br) || len(br.Messages) == 0 {
		return err
	}
	for _, m := range br.Messages[:len(br.Messages)-1] {
		graphql.AddError(ctx, badInput(m))
	}
	return badInput(br.Messages[len(br.Messages)-1])
}

// presentError maps app's errors to the wire once: a database failure to
// `Service unavailable` (logged unless the database is down, which db.Health
// logs once), a lookup that found nothing to NOT_FOUND, anything unexpected
// as gqlgen presents it.
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		var (
			u  *app.Unavailable
			nf *app.NotFound
			br *app.BadRequest
		)
		switch {
		case errors.As(err, &u):
			if !u.Outage() {
				// err, not u.Cause: the read names its question around the Unavailable
				log.Error("graphql: query failed", "path", graphql.GetPath(ctx).String(), "err", err)
			}
			return &gqlerror.Error{Message: app.UnavailableMessage, Path: graphql.GetPath(ctx),
				Extensions: map[string]any{"code": CodeUnavailable}}
		case errors.As(err, &nf):
			return &gqlerror.Error{Message: nf.Message, Path: graphql.GetPath(ctx),
				Extensions: map[string]any{"code": CodeNotFound}}
		case errors.As(err, &br) && len(br.Messages) > 0:
			// not through fieldError: only the last message can be told
			return &gqlerror.Error{Message: br.Messages[len(br.Messages)-1], Path: graphql.GetPath(ctx),
				Extensions: map[string]any{"code": CodeBadUserInput}}
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
