-- Newest first; id breaks ties within a millisecond so pages are stable. A null filter is off.
-- $1 status, $2 queue, $3 name, $4 root_id, $5 correlation_id, $6 limit, $7 offset.
select * from cairnq_tasks
where ($1::text is null or status = $1::text)
  and ($2::text is null or queue = $2::text)
  and ($3::text is null or name = $3::text)
  and ($4::text is null or root_id = $4::text)
  and ($5::text is null or correlation_id = $5::text)
order by created_at_ms desc, id desc
limit $6::bigint offset $7::bigint
