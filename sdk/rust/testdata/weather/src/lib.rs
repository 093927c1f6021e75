// get_weather in Rust, the twin of the Go SDK benchmark's tool
// (host/internal/benchwasm): the Rust row of make bench-wasm builds it.

use adkhost::{json, state, Context, Module, Result};
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
struct WeatherArgs {
    city: String,
    #[serde(default)]
    days: i64,
}

#[derive(Serialize)]
struct Forecast {
    city: String,
    days: Vec<Day>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Day {
    summary: &'static str,
    high_c: f64,
}

fn get_weather(_: &Context, a: WeatherArgs) -> Result<Forecast> {
    let city = a.city.trim().to_string();
    let days = a.days.max(1);
    if days > 3 {
        return Err(format!("at most 3 days, not {}", days).into());
    }
    state::set("user:last_city", &city)?;
    Ok(Forecast { city, days: (0..days).map(|i| Day { summary: "sunny", high_c: 21.0 + i as f64 }).collect() })
}

fn setup(m: &mut Module) {
    m.capability("state");
    m.tool(
        "get_weather",
        "Returns the weather forecast of a city.",
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "the city, e.g. Paris"},
                "days": {"type": "integer", "description": "how many days to forecast, 1 to 3; 1 if absent"},
            },
            "required": ["city"],
        }),
        get_weather,
    );
}

adkhost::module!("weather-rust", "1.0.0", setup);
