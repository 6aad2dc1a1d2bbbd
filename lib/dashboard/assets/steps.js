// The task page's steps card (docs/api.md, "Durable steps"): each stored step
// (id, kind, stored at, size, what it waits on) and what a queued task is
// sleeping or waiting for. The answer of api/tasks/<id>?steps=<offset>
// carries one page of the view (`client.steps`) and the total; the card
// links to the pages before and after. The signals card (docs/api.md,
// "Signals"): the signal a task waits for, its signals not consumed yet, and
// a form sending one (POST api/tasks/<id>/signal). Uses the helpers app.js
// publishes; text nodes only.
"use strict";

(() => {
  const { taskCards, h, when, statusBadge, taskLink, api, flash, route } = window.cairnqDashboard;

  function size(bytes) {
    if (bytes < 1024) return `${bytes} B`;
    if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
    return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  }

  function detail(step) {
    if (step.kind === "sleep") return ["until ", when(step.wakeAtMs)];
    if (step.kind === "child")
      return [taskLink(step.childId), " ", step.childStatus ? statusBadge(step.childStatus) : "gone"];
    return "";
  }

  function suspension(suspended) {
    if (!suspended || suspended.kind === "signal") return null;
    const what =
      suspended.kind === "sleep"
        ? ["Sleeping until ", when(suspended.untilMs), ` (step ${suspended.step}).`]
        : [
            "Waiting for child ",
            taskLink(suspended.childId),
            " ",
            suspended.childStatus ? statusBadge(suspended.childStatus) : "gone",
            ` (step ${suspended.step}); looks again `,
            when(suspended.recheckAtMs),
            ".",
          ];
    return h("p", { id: "suspended", "data-kind": suspended.kind }, ...what);
  }

  function pager(taskId, view) {
    if (view.total <= view.limit) return null;
    const page = (offset) => `#/task/${encodeURIComponent(taskId)}?steps=${offset}`;
    const last = view.offset + view.steps.length;
    return h(
      "div",
      { class: "pager" },
      h(
        "button",
        {
          id: "steps-prev",
          disabled: view.offset === 0,
          onclick: () => (location.hash = page(Math.max(0, view.offset - view.limit))),
        },
        "← Earlier",
      ),
      h("span", { class: "muted" }, `${view.offset + 1}–${last} of ${view.total}`),
      h(
        "button",
        { id: "steps-next", disabled: last >= view.total, onclick: () => (location.hash = page(last)) },
        "Later →",
      ),
    );
  }

  function sendForm(task) {
    const readOnly = window.cairnqDashboard.config.readOnly;
    const name = h("input", { id: "signal-name", placeholder: "name", disabled: readOnly });
    const payload = h("input", { id: "signal-payload", placeholder: "payload (JSON, optional)", disabled: readOnly });
    const send = h(
      "button",
      {
        id: "signal-send",
        class: "primary",
        disabled: readOnly,
        title: readOnly ? "read-only dashboard" : null,
        onclick: async () => {
          const body = { name: name.value };
          if (payload.value.trim() !== "") body.payload = payload.value;
          try {
            await api(`api/tasks/${encodeURIComponent(task.id)}/signal`, { body });
            flash(`Signal ${name.value} sent.`);
            route();
          } catch (err) {
            flash(err.message, true);
          }
        },
      },
      "Send signal",
    );
    return h("div", { class: "actions" }, name, payload, send);
  }

  taskCards.push(({ task, steps: view }) => {
    const unfinished = task.status === "queued" || task.status === "running";
    const signals = view?.signals ?? [];
    const waiting = view?.suspended?.kind === "signal" ? view.suspended : null;
    if (!unfinished && signals.length === 0) return null;
    const rows = signals.map((signal) =>
      h(
        "tr",
        {},
        h("td", { class: "mono" }, signal.name),
        h("td", {}, when(signal.sentAtMs)),
        h("td", {}, size(signal.size)),
      ),
    );
    return h(
      "div",
      { class: "card" },
      h("h2", {}, `Signals (${view?.signalsTotal ?? 0} not consumed)`),
      waiting
        ? h(
            "p",
            { id: "signal-wait" },
            `Waiting for signal ${waiting.name} (step ${waiting.step}) until `,
            when(waiting.timeoutAtMs),
            ".",
          )
        : null,
      rows.length
        ? h(
            "table",
            { id: "signals" },
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                ["Signal", "Sent", "Size"].map((c) => h("th", {}, c)),
              ),
            ),
            h("tbody", {}, rows),
          )
        : null,
      unfinished ? sendForm(task) : null,
    );
  });

  taskCards.push(({ task, steps: view }) => {
    if (!view || view.total === 0) return null;
    const rows = view.steps.map((step) =>
      h(
        "tr",
        {},
        h("td", { class: "mono" }, step.id),
        h("td", {}, step.kind),
        h("td", {}, when(step.storedAtMs)),
        h("td", {}, step.kind === "step" ? size(step.size) : "-"),
        h("td", {}, detail(step)),
      ),
    );
    return h(
      "div",
      { class: "card" },
      h("h2", {}, `Steps (${view.total})`),
      suspension(view.suspended),
      h(
        "table",
        { id: "steps" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Step", "Kind", "Stored", "Size", ""].map((c) => h("th", {}, c)),
          ),
        ),
        h("tbody", {}, rows),
      ),
      pager(task.id, view),
    );
  });
})();
