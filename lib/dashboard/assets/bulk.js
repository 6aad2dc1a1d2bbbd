// The task list's bulk card (docs/api.md, "Bulk retry and cancel"): "Retry
// all" and "Cancel all" for the list's queue and name filters and its status
// (each button only where that status is one its action changes). A click
// asks for a dry run first (POST api/tasks/retry-many|cancel-many with
// `dryRun`), confirms the count, then changes page after page until one is
// not full. Uses the helpers app.js publishes; text nodes only.
"use strict";

(() => {
  const { listCards, h, api, flash, route } = window.cairnqDashboard;

  const ACTIONS = [
    { id: "retry-many", label: "Retry all", verb: "Retry", done: "Retried", statuses: ["failed", "canceled"] },
    { id: "cancel-many", label: "Cancel all", verb: "Cancel", done: "Canceled", statuses: ["queued", "running"] },
  ];

  function filterOf(params) {
    const filter = {};
    for (const key of ["queue", "name", "status"]) if (params.get(key)) filter[key] = params.get(key);
    return filter;
  }

  async function run(action, filter) {
    const preview = await api(`api/tasks/${action.id}`, { body: { ...filter, dryRun: true } });
    if (preview.count === 0) return flash(`Nothing to ${action.verb.toLowerCase()} with these filters.`);
    const shown = `${preview.count}${preview.more ? "+" : ""}`;
    if (!confirm(`${action.verb} ${shown} task(s) matching these filters?`)) return;
    let count = 0;
    for (;;) {
      const page = await api(`api/tasks/${action.id}`, { body: filter });
      count += page.count;
      if (!page.more || page.count === 0) break;
    }
    flash(`${action.done} ${count} task(s).`);
    route();
  }

  listCards.push((params) => {
    const { config } = window.cairnqDashboard;
    const filter = filterOf(params);
    const buttons = ACTIONS.filter((a) => !filter.status || a.statuses.includes(filter.status)).map((action) =>
      h(
        "button",
        {
          id: action.id,
          class: "danger",
          type: "button",
          disabled: config.readOnly,
          title: config.readOnly ? "read-only dashboard" : null,
          onclick: async () => {
            try {
              await run(action, filter);
            } catch (err) {
              flash(err.message, true);
            }
          },
        },
        `${action.label}…`,
      ),
    );
    const scope = [filter.queue && `queue ${filter.queue}`, filter.name && `name ${filter.name}`, filter.status]
      .filter(Boolean)
      .join(", ");
    return h(
      "div",
      { class: "card bulk" },
      h("span", { class: "muted" }, scope ? `Every task of ${scope}: ` : "Every task of every queue: "),
      ...buttons.flatMap((button) => [button, " "]),
    );
  });
})();
