-- One start per claimed task (a JSON list of ids), at its claim time, in a
-- budget (:name, :shared_key), under its group when the rate is per group,
-- else under ''. :name, :shared_key, :ids, :per_group.
insert into cairnq_flow_starts (name, shared_key, grp, started_at_ms)
select :name,
    :shared_key,
    case when :per_group
        then coalesce(cast(json_extract(metadata, '$."cairnq.group"') as text), '')
        else ''
    end,
    updated_at_ms
from cairnq_tasks
where id in (select value from json_each(:ids))
