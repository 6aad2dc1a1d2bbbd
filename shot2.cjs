const { chromium } = require("/work/wt-11/node_modules/playwright-core");
(async () => {
  const b = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
  const p = await b.newPage({ viewport: { width: 1280, height: 800 } });
  p.on("pageerror", (e) => console.log("pageerror:", e.message));
  await p.goto("http://127.0.0.1:47312/#/tasks?queue=reports");
  await p.waitForSelector("tr[data-task-id]");
  await p.screenshot({ path: "/tmp/wt11-demo/list.png" });
  await b.close();
})().catch((e) => { console.error(e); process.exit(1); });
