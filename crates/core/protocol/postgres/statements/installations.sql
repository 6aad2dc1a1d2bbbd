-- Where cairnq is installed, read before anything is created: one row per
-- schema holding an ordinary table cairnq_tasks (found through the catalog,
-- not the search_path), each with this connection's current_schema (NULL
-- when the search_path names nothing that exists). No installation: one row
-- whose schema is NULL. No parameters.
select current_schema()::text as current_schema, n.nspname::text as schema
from (select 1) as one
left join pg_catalog.pg_class as c on c.relname = 'cairnq_tasks' and c.relkind = 'r'
left join pg_catalog.pg_namespace as n on n.oid = c.relnamespace
order by n.nspname
