-- Who answers for a tool, a model deployment and a tenant: a person's
-- e-mail or an identity-provider group (group:NAME); '' is none. Changing
-- one is a governed change (docs/changes.md, kind owner).
ALTER TABLE tools ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE model_deployments ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE tenants ADD COLUMN owner TEXT NOT NULL DEFAULT '';
