// The cairnq dashboard page. Plain browser script, served by the package
// (lib/dashboard/handler.js); it talks only to its own origin. Every value
// from the database reaches the page as a text node or an attribute set
// through the DOM, never as HTML.
"use strict";

(() => {
  const main = document.getElementById("main");
  const flashBox = document.getElementById("flash");
  const live = document.getElementById("live");
  // The statuses come with the config: the core's, in their order.
  let config = { csrf: "", readOnly: true, refreshMs: 2000, statuses: [], terminalStatuses: [] };

  // --- DOM helpers: text only -------------------------------------------------

  // Bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069)
  // reorder the text around them: "invoice\u202Efdp.exe" reads as
  // "invoiceexe.pdf". Every database value is shown with them spelled out.
  const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;
  function visible(text) {
    return String(text).replace(BIDI_CONTROLS, (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase()}>`);
  }

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "class") el.className = v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(visible(c)));
    }
    return el;
  }

  function svg(tag, attrs) {
    const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    return el;
  }

  function flash(message, isError = false) {
    flashBox.textContent = visible(message);
    flashBox.className = isError ? "error" : "";
  }

  function statusBadge(status) {
    return h("span", { class: `status status-${config.statuses.includes(status) ? status : "canceled"}` }, status);
  }

  function taskLink(id) {
    return h("a", { href: `#/task/${encodeURIComponent(id)}`, class: "mono" }, id);
  }

  function listLink(params, label) {
    return h("a", { href: `#/tasks?${new URLSearchParams(params)}` }, label);
  }

  function rel(at) {
    if (at === null || at === undefined) return "-";
    const delta = at - Date.now();
    const abs = Math.abs(delta);
    if (abs < 1000) return "now";
    const s = Math.floor(abs / 1000);
    const text =
      s < 60
        ? `${s}s`
        : s < 3600
          ? `${Math.floor(s / 60)}m ${s % 60}s`
          : s < 86400
            ? `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`
            : `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
    return delta < 0 ? `${text} ago` : `in ${text}`;
  }

  // Another program may store a time no Date holds (toISOString throws on
  // it): shown as its number, so the rest of the page still renders.
  function iso(at) {
    const date = new Date(at);
    return Number.isNaN(date.getTime()) ? `${at} ms (no date)` : date.toISOString();
  }

  function when(at) {
    if (at === null || at === undefined) return "-";
    const text = iso(at);
    return h("span", { title: text }, `${text.replace("T", " ").replace("Z", " UTC")} (${rel(at)})`);
  }

  function sparkline(values) {
    const width = 160;
    const height = 28;
    const el = svg("svg", { class: "spark", viewBox: `0 0 ${width} ${height}`, "aria-hidden": "true" });
    el.append(svg("line", { x1: 0, y1: height - 1, x2: width, y2: height - 1 }));
    const shown = values.slice(-40);
    if (shown.length > 1) {
      const max = Math.max(...shown, 0.0001);
      const points = shown.map(
        (v, i) =>
          `${((i / (shown.length - 1)) * width).toFixed(1)},${(height - 2 - (v / max) * (height - 4)).toFixed(1)}`,
      );
      el.append(svg("polyline", { points: points.join(" ") }));
    }
    return el;
  }

  // --- the API -------------------------------------------------------------------

  async function api(path, options = {}) {
    const init = { credentials: "same-origin", headers: {} };
    if (options.body !== undefined) {
      init.method = "POST";
      init.headers = { "content-type": "application/json", "x-csrf-token": config.csrf };
      init.body = JSON.stringify(options.body);
    }
    const res = await fetch(path, init);
    const type = res.headers.get("content-type") || "";
    const body = type.includes("application/json") ? await res.json() : { error: (await res.text()).trim() };
    if (!res.ok) throw new Error(body.error || `HTTP ${res.status}`);
    live.classList.remove("stale");
    return body;
  }

  // --- routing -------------------------------------------------------------------

  // Pages defined by the page's other scripts (schedules.js), by hash path;
  // cards they add to the task page (steps.js), each given the task's answer,
  // and to the task list (bulk.js), each given the list's filters.
  const pages = {};
  const taskCards = [];
  const listCards = [];
  window.cairnqDashboard = {
    pages,
    taskCards,
    listCards,
    h,
    when,
    statusBadge,
    taskLink,
    api,
    flash,
    route,
    get config() {
      return config;
    },
  };

  function route() {
    const hash = location.hash.replace(/^#/, "") || "/";
    const [pathPart, query = ""] = hash.split("?");
    const params = new URLSearchParams(query);
    const refresh = window.cairnqUpdates.newView((err) => flash(err.message, true));
    if (pathPart.startsWith("/task/"))
      return showTask(decodeURIComponent(pathPart.slice("/task/".length)), params, refresh);
    if (pathPart === "/tasks") return showTasks(params, refresh);
    if (pages[pathPart]) return pages[pathPart](refresh);
    return showOverview(refresh);
  }

  // --- overview --------------------------------------------------------------------

  function showOverview(refresh) {
    const body = h("tbody");
    const totalSpark = h("span");
    const more = h("p", { class: "muted", id: "queues-more", hidden: true });
    const table = h(
      "table",
      { id: "queues" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", {}, "queue"),
          config.statuses.map((s) => h("th", { class: "num" }, s)),
          h("th", { class: "num" }, "done/s"),
          h("th", {}, "throughput"),
          h("th", {}, "state"),
        ),
      ),
      body,
    );
    main.replaceChildren(
      h("h1", {}, "Queues"),
      h(
        "div",
        { class: "card" },
        table,
        more,
        h("p", { class: "muted" }, "All queues, tasks finished per second: ", totalSpark),
      ),
      purgeCard(),
    );
    refresh(
      async () => {
        const data = await api("api/overview");
        const rows = data.queues.map((q) =>
          h(
            "tr",
            { "data-queue": q.queue },
            h("td", {}, listLink({ queue: q.queue }, q.queue)),
            config.statuses.map((s) =>
              h(
                "td",
                { class: `num${q.counts[s] === 0 ? " zero" : ""}`, "data-status": s },
                q.counts[s] === 0 ? "0" : listLink({ queue: q.queue, status: s }, String(q.counts[s])),
              ),
            ),
            h("td", { class: "num" }, (q.perSecond.at(-1) || 0).toFixed(1)),
            h("td", {}, sparkline(q.perSecond)),
            h("td", { class: "queue-state" }, q.paused ? "paused " : "active ", pauseButton(q)),
          ),
        );
        if (rows.length === 0) rows.push(h("tr", {}, h("td", { colspan: 9, class: "muted" }, "No tasks yet.")));
        body.replaceChildren(...rows);
        more.hidden = data.queueCount <= data.queues.length;
        more.textContent = `The first ${data.queues.length} of ${data.queueCount} queues by name; the task list filters by any queue.`;
        totalSpark.replaceChildren(sparkline(data.perSecond), ` ${(data.perSecond.at(-1) || 0).toFixed(1)}/s`);
      },
      () => true,
    );
  }

  /** Pause or resume the queue: no worker of any process claims from a paused one. */
  function pauseButton(q) {
    const action = q.paused ? "resume" : "pause";
    return h(
      "button",
      {
        class: `queue-${action}${q.paused ? " primary" : " danger"}`,
        disabled: config.readOnly,
        title: config.readOnly ? "read-only dashboard" : null,
        onclick: async () => {
          try {
            await api(`api/queues/${action}`, { body: { queue: q.queue } });
            flash(`${q.queue} is ${q.paused ? "active" : "paused"} now.`);
            route();
          } catch (err) {
            flash(err.message, true);
          }
        },
      },
      q.paused ? "Resume" : "Pause",
    );
  }

  function purgeCard() {
    const older = h("input", {
      id: "purge-older",
      name: "olderThan",
      value: "7d",
      size: 6,
      "aria-label": "older than",
    });
    const status = h(
      "select",
      { id: "purge-status", name: "status" },
      h("option", { value: "" }, "any finished"),
      config.terminalStatuses.map((s) => h("option", { value: s }, s)),
    );
    const queue = h("input", { id: "purge-queue", name: "queue", placeholder: "any queue", size: 12 });
    const button = h(
      "button",
      {
        id: "purge-button",
        class: "danger",
        type: "submit",
        disabled: config.readOnly,
        title: config.readOnly ? "read-only dashboard" : null,
      },
      "Purge…",
    );
    const form = h(
      "form",
      {
        class: "purge",
        onsubmit: async (event) => {
          event.preventDefault();
          const filter = { olderThan: older.value.trim() || "0" };
          if (status.value) filter.status = status.value;
          if (queue.value.trim()) filter.queue = queue.value.trim();
          try {
            const preview = await api(`api/purge-preview?${new URLSearchParams(filter)}`);
            if (preview.count === 0) return flash("Nothing to purge with these filters.");
            if (
              !confirm(
                `Delete ${preview.count} finished task(s) completed more than ${filter.olderThan} ago? This cannot be undone.`,
              )
            )
              return;
            const done = await api("api/purge", { body: filter });
            flash(`Purged ${done.count} task(s).`);
          } catch (err) {
            flash(err.message, true);
          }
        },
      },
      h("label", {}, "completed more than", older, ""),
      h("label", {}, "status", status),
      h("label", {}, "queue", queue),
      button,
    );
    return h(
      "div",
      { class: "card" },
      h("h2", {}, "Purge finished tasks"),
      form,
      config.readOnly ? h("p", { class: "muted" }, "Read-only: actions are disabled.") : null,
    );
  }

  // --- task list ---------------------------------------------------------------------

  function showTasks(params, refresh) {
    const field = (name, attrs) => h("input", { name, value: params.get(name) || "", ...attrs });
    const status = h(
      "select",
      { name: "status" },
      h("option", { value: "" }, "any"),
      config.statuses.map((s) => h("option", { value: s, selected: params.get("status") === s }, s)),
    );
    const filters = h(
      "form",
      {
        class: "filters",
        id: "filters",
        onsubmit: (event) => {
          event.preventDefault();
          const next = new URLSearchParams();
          for (const [k, v] of new FormData(event.target)) if (String(v).trim()) next.set(k, String(v).trim());
          location.hash = `#/tasks?${next}`;
        },
      },
      h("label", {}, "queue", field("queue", { size: 12 })),
      h("label", {}, "status", status),
      h("label", {}, "name", field("name", { size: 18 })),
      params.get("root") ? h("label", {}, "root", field("root", { size: 30 })) : null,
      params.get("correlation") ? h("label", {}, "correlation", field("correlation", { size: 24 })) : null,
      h("button", { type: "submit", class: "primary" }, "Filter"),
    );
    const body = h("tbody");
    const pager = h("div", { class: "pager" });
    main.replaceChildren(
      h("h1", {}, "Tasks"),
      h("div", { class: "card" }, filters),
      ...listCards.map((card) => card(params)),
      h(
        "div",
        { class: "card" },
        h(
          "table",
          { id: "tasks" },
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["id", "name", "queue", "status", "attempt", "progress", "created", "updated"].map((c) => h("th", {}, c)),
            ),
          ),
          body,
        ),
        pager,
      ),
    );
    const offset = Number(params.get("offset") || 0);
    refresh(
      async () => {
        const query = new URLSearchParams(params);
        query.set("limit", "25");
        const data = await api(`api/tasks?${query}`);
        const rows = data.tasks.map((t) =>
          h(
            "tr",
            { "data-task-id": t.id },
            h("td", {}, taskLink(t.id)),
            h("td", {}, t.name),
            h("td", {}, t.queue),
            h("td", {}, statusBadge(t.status)),
            h("td", {}, `${t.attempt}/${t.max_attempts}`),
            h("td", {}, t.progress === null ? "-" : `${Math.round(t.progress * 100)}%`),
            h("td", { title: iso(t.created_at_ms) }, rel(t.created_at_ms)),
            h("td", { title: iso(t.updated_at_ms) }, rel(t.updated_at_ms)),
          ),
        );
        if (rows.length === 0) rows.push(h("tr", {}, h("td", { colspan: 8, class: "muted" }, "No tasks match.")));
        body.replaceChildren(...rows);
        const page = (to) => {
          const next = new URLSearchParams(params);
          if (to > 0) next.set("offset", String(to));
          else next.delete("offset");
          return `#/tasks?${next}`;
        };
        pager.replaceChildren(
          h(
            "button",
            { id: "prev", disabled: offset === 0, onclick: () => (location.hash = page(Math.max(0, offset - 25))) },
            "← Newer",
          ),
          h("span", { class: "muted" }, data.tasks.length ? `${offset + 1}–${offset + data.tasks.length}` : ""),
          h(
            "button",
            { id: "next", disabled: !data.hasMore, onclick: () => (location.hash = page(offset + 25)) },
            "Older →",
          ),
        );
      },
      (change) => !params.get("queue") || change.queues.includes(params.get("queue")),
    );
  }

  // --- task page ---------------------------------------------------------------------

  function showTask(id, params, refresh) {
    const content = h("div");
    main.replaceChildren(h("h1", {}, "Task ", h("span", { class: "mono" }, id)), content);
    // The steps card's page (steps.js links to it).
    const steps = new URLSearchParams(params.has("steps") ? { steps: params.get("steps") } : {});
    // The task and the tasks it spawned: what a change must name to concern the page.
    let shown = new Set([id]);
    refresh(
      async () => {
        const answer = await api(`api/tasks/${encodeURIComponent(id)}?${steps}`);
        shown = new Set([answer.task.id, ...answer.spawned.map((c) => c.id)]);
        const cards = taskCards.map((card) => card(answer));
        content.replaceChildren(...[...renderTask(answer.task, answer.spawned), ...cards].filter(Boolean));
      },
      (change) => change.tasks.some((task) => shown.has(task)),
    );
  }

  function renderTask(t, spawned) {
    const now = Date.now();
    const lease =
      t.lease_until_ms === null
        ? "-"
        : `${t.worker_id || "?"} · ${t.lease_until_ms > now ? `expires ${rel(t.lease_until_ms)}` : `expired ${rel(t.lease_until_ms)}`}`;
    const canRetry = t.status === "failed" || t.status === "canceled";
    const canCancel = t.status === "queued" || t.status === "running";
    const act = (name, label, cls, enabled, question) =>
      h(
        "button",
        {
          id: name,
          class: cls,
          disabled: config.readOnly || !enabled,
          title: config.readOnly ? "read-only dashboard" : null,
          onclick: async () => {
            if (!confirm(visible(question))) return;
            try {
              const done = await api(`api/tasks/${encodeURIComponent(t.id)}/${name}`, { body: {} });
              flash(`${label}: task is ${done.task.status} now.`);
              route();
            } catch (err) {
              flash(err.message, true);
            }
          },
        },
        label,
      );
    const field = (label, value, attrs = {}) => [h("dt", {}, label), h("dd", attrs, value)];
    const lineage = (label, value, param) =>
      field(label, value ? [taskLink(value), " ", param ? listLink({ [param]: value }, "(tree)") : null] : "-");
    const fields = h(
      "dl",
      { class: "fields" },
      field("name", t.name),
      field("queue", listLink({ queue: t.queue }, t.queue)),
      field("status", [statusBadge(t.status), t.cancel_requested_at_ms !== null ? " cancel requested" : ""], {
        id: "task-status",
        "data-status": t.status,
      }),
      field("attempt", `${t.attempt} of ${t.max_attempts}`, { id: "task-attempt" }),
      field("priority", String(t.priority)),
      field(
        "progress",
        t.progress === null ? "-" : [h("span", { class: "progress" }, h("span")), `${Math.round(t.progress * 100)}%`],
      ),
      field("message", t.message ?? "-"),
      field("lease", lease),
      field("run at", when(t.run_at_ms)),
      field("created", when(t.created_at_ms)),
      field("updated", when(t.updated_at_ms)),
      field("completed", when(t.completed_at_ms)),
      lineage("parent", t.parent_id),
      lineage("root", t.root_id, "root"),
      field("correlation", t.correlation_id ? listLink({ correlation: t.correlation_id }, t.correlation_id) : "-"),
    );
    // The bar's width is a CSSOM property, not an inline style attribute (CSP).
    const bar = fields.querySelector(".progress > span");
    if (bar) bar.style.width = `${Math.round(Math.max(0, Math.min(1, t.progress)) * 100)}%`;
    const json = (title, value, id) =>
      h("div", { class: "card" }, h("h2", {}, title), h("pre", { id }, JSON.stringify(value, null, 2)));
    return [
      h(
        "div",
        { class: "actions" },
        act("retry", "Retry", "primary", canRetry, `Retry task ${t.id}? It goes back to its queue.`),
        act("cancel", "Cancel", "danger", canCancel, `Cancel task ${t.id}?`),
      ),
      h("div", { class: "card" }, fields),
      h(
        "div",
        { class: "grid2" },
        json("Payload", t.payload, "payload"),
        t.error !== null ? json("Error", t.error, "error") : json("Result", t.result, "result"),
      ),
      t.metadata && Object.keys(t.metadata).length ? json("Metadata", t.metadata, "metadata") : null,
      h(
        "div",
        { class: "card" },
        h("h2", {}, `Spawned tasks (${spawned.length})`),
        spawned.length
          ? h(
              "table",
              { id: "spawned" },
              h(
                "tbody",
                {},
                spawned.map((c) =>
                  h("tr", {}, h("td", {}, taskLink(c.id)), h("td", {}, c.name), h("td", {}, statusBadge(c.status))),
                ),
              ),
            )
          : h("p", { class: "muted" }, "None."),
      ),
    ];
  }

  // --- search and start ------------------------------------------------------------------

  document.getElementById("search-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const q = document.getElementById("search").value.trim();
    if (!q) return;
    try {
      const found = await api(`api/search?${new URLSearchParams({ q })}`);
      if (found.task) location.hash = `#/task/${encodeURIComponent(found.task.id)}`;
      else flash(`No task with id or key ${JSON.stringify(q)}.`, true);
    } catch (err) {
      flash(err.message, true);
    }
  });

  window.addEventListener("hashchange", () => {
    flash("");
    route();
  });

  // The page's other deferred scripts (which add pages) have all run by
  // DOMContentLoaded; the config may arrive before them.
  const scriptsRan = new Promise((resolve) =>
    document.readyState === "complete" ? resolve() : window.addEventListener("DOMContentLoaded", resolve),
  );
  api("api/config").then(
    async (c) => {
      config = c;
      document.getElementById("mode").textContent = config.readOnly ? "read-only" : "";
      await scriptsRan;
      window.cairnqUpdates.connect(config.refreshMs);
      route();
    },
    (err) => {
      main.replaceChildren(h("p", {}, `Could not load the dashboard: ${err.message}`));
    },
  );
})();
