package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/adkhost/adkhost/engine/artifact"
)

func (s *Server) listArtifacts(c echo.Context) error {
	names, err := s.cfg.Stores.Artifacts.List(c.Request().Context(), c.Param("app"), c.Param("user"), c.Param("session"))
	if err != nil {
		return wrapErr(http.StatusInternalServerError, "listing artifacts", err)
	}
	if names == nil {
		names = []string{}
	}
	return c.JSON(http.StatusOK, names)
}

// artifactPath splits the wildcard of the artifact routes as google-adk's
// routes match it: "<name>/versions" lists versions, "<name>/versions/<v>"
// loads one ("latest" or a number), anything else is a name (which may
// hold slashes). The wildcard is decoded already (decodeParams): decoding
// it again made "a%2541" name "aA", not "a%41".
func artifactPath(c echo.Context) (name, versionID string, listVersions bool, err error) {
	p := c.Param("*")
	if n, ok := strings.CutSuffix(p, "/versions"); ok && n != "" {
		return n, "", true, nil
	}
	if i := strings.LastIndex(p, "/versions/"); i > 0 {
		return p[:i], p[i+len("/versions/"):], false, nil
	}
	if p == "" {
		return "", "", false, errorf(http.StatusNotFound, "artifact name missing")
	}
	return p, c.QueryParam("version"), false, nil
}

func (s *Server) artifactKey(c echo.Context, name string) artifact.Key {
	return artifact.Key{AppName: c.Param("app"), UserID: c.Param("user"), SessionID: c.Param("session"), Name: name}
}

// getArtifact loads an artifact version (latest by default), or lists its
// versions.
func (s *Server) getArtifact(c echo.Context) error {
	name, vid, list, err := artifactPath(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	k := s.artifactKey(c, name)
	if list {
		vs, err := s.cfg.Stores.Artifacts.Versions(ctx, k)
		if err != nil {
			return wrapErr(http.StatusInternalServerError, "listing artifact versions", err)
		}
		if vs == nil {
			vs = []int{}
		}
		return c.JSON(http.StatusOK, vs)
	}
	version := artifact.Latest
	if vid != "" && vid != "latest" {
		if version, err = strconv.Atoi(vid); err != nil || version < 0 {
			return errorf(http.StatusUnprocessableEntity, "Invalid version ID")
		}
	}
	part, err := s.cfg.Stores.Artifacts.Load(ctx, k, version)
	if errors.Is(err, artifact.ErrNotFound) {
		return errorf(http.StatusNotFound, "Artifact not found")
	}
	if err != nil {
		return wrapErr(http.StatusInternalServerError, "loading artifact", err)
	}
	return c.JSON(http.StatusOK, part)
}

// deleteArtifact removes every version; it answers null like google-adk.
func (s *Server) deleteArtifact(c echo.Context) error {
	name, _, list, err := artifactPath(c)
	if err != nil {
		return err
	}
	if list {
		return errorf(http.StatusMethodNotAllowed, "cannot delete a version list: DELETE the artifact")
	}
	if err := s.cfg.Stores.Artifacts.Delete(c.Request().Context(), s.artifactKey(c, name)); err != nil {
		return wrapErr(http.StatusInternalServerError, "deleting artifact", err)
	}
	return c.JSON(http.StatusOK, nil)
}
