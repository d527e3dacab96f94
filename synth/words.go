package synth

// Word lists. Everything here is plain English vocabulary chosen so that a
// Penn-treebank tagger (prose) reads the review templates the intended way:
// topic nouns tag NN/NNS, topic adjectives JJ. TestTopicWordsTag checks it.

// rootCategory is the top of the clothing tree, as in the 2014 files.
const rootCategory = "Clothing, Shoes & Jewelry"

// subcatBase is a subcategory name with the noun its product titles use and
// optional third-level children.
type subcatBase struct {
	name     string
	noun     string
	children []string
}

var shoeChildren = []string{"Boots", "Sneakers", "Sandals", "Loafers & Slip-Ons", "Oxfords", "Slippers"}
var jewelryChildren = []string{"Necklaces", "Rings", "Earrings", "Bracelets", "Brooches & Pins"}

// topBases lists, per top-level node, the subcategories in order of use; a
// scale needing more than listed adds qualified variants (topQualifiers).
var topBases = map[string][]subcatBase{
	"Men": {
		{"Shirts", "Shirt", []string{"Casual Button-Down Shirts", "Dress Shirts", "Henleys"}},
		{"Pants", "Pant", nil},
		{"Shoes", "Shoe", shoeChildren},
		{"Jackets & Coats", "Jacket", []string{"Down & Parkas", "Leather & Faux Leather", "Wool & Blends"}},
		{"Watches", "Watch", nil},
		{"Socks", "Sock", nil},
		{"Jeans", "Jean", nil},
		{"T-Shirts", "Tee", nil},
		{"Shorts", "Short", nil},
		{"Sweaters", "Sweater", nil},
		{"Suits & Sport Coats", "Blazer", nil},
		{"Hoodies & Sweatshirts", "Hoodie", nil},
		{"Active", "Track Jacket", nil},
		{"Sleep & Lounge", "Pajama Set", nil},
		{"Underwear", "Boxer Brief", nil},
		{"Swim", "Swim Trunk", nil},
		{"Belts", "Belt", nil},
		{"Wallets, Card Cases & Money Organizers", "Wallet", nil},
		{"Hats & Caps", "Cap", nil},
		{"Ties, Cummerbunds & Pocket Squares", "Tie", nil},
		{"Sunglasses", "Sunglasses", nil},
		{"Gloves & Mittens", "Glove", nil},
		{"Scarves", "Scarf", nil},
		{"Cufflinks", "Cufflink Set", nil},
		{"Jewelry", "Chain", jewelryChildren},
		{"Vests", "Vest", nil},
		{"Overalls", "Overall", nil},
		{"Rain Wear", "Rain Jacket", nil},
		{"Uniforms, Work & Safety", "Work Shirt", nil},
		{"Costumes", "Costume", nil},
		{"Keyrings & Keychains", "Keychain", nil},
		{"Suspenders", "Suspender", nil},
		{"Backpacks", "Backpack", nil},
		{"Luggage", "Duffel Bag", nil},
		{"Umbrellas", "Umbrella", nil},
		{"Handkerchiefs", "Handkerchief", nil},
		{"Polos", "Polo", nil},
		{"Cardigans", "Cardigan", nil},
		{"Thermal Underwear", "Thermal Top", nil},
		{"Fashion Hoodies", "Zip Hoodie", nil},
	},
	"Women": {
		{"Dresses", "Dress", []string{"Casual", "Cocktail", "Maxi", "Wear to Work"}},
		{"Tops & Tees", "Top", []string{"Blouses & Button-Down Shirts", "Knits & Tees", "Tanks & Camis"}},
		{"Jeans", "Jean", nil},
		{"Shoes", "Shoe", shoeChildren},
		{"Handbags", "Handbag", []string{"Shoulder Bags", "Clutches", "Totes"}},
		{"Jewelry", "Necklace", jewelryChildren},
		{"Swimsuits & Cover Ups", "Swimsuit", nil},
		{"Skirts", "Skirt", nil},
		{"Pants", "Pant", nil},
		{"Shorts", "Short", nil},
		{"Leggings", "Legging", nil},
		{"Sweaters", "Sweater", nil},
		{"Coats, Jackets & Vests", "Coat", nil},
		{"Jumpsuits, Rompers & Overalls", "Romper", nil},
		{"Lingerie, Sleep & Lounge", "Chemise", nil},
		{"Négligées & Peignoirs", "Négligée", nil},
		{"Active", "Sports Bra", nil},
		{"Socks & Hosiery", "Tights", nil},
		{"Suiting & Blazers", "Blazer", nil},
		{"Watches", "Watch", nil},
		{"Wallets", "Wallet", nil},
		{"Belts", "Belt", nil},
		{"Scarves & Wraps", "Scarf", nil},
		{"Hats & Caps", "Hat", nil},
		{"Sunglasses", "Sunglasses", nil},
		{"Gloves & Mittens", "Glove", nil},
		{"Hair Accessories", "Headband", nil},
		{"Costumes", "Costume", nil},
		{"Bridal", "Veil", nil},
		{"Uniforms, Work & Safety", "Scrub Top", nil},
		{"Hoodies & Sweatshirts", "Hoodie", nil},
		{"Cardigans", "Cardigan", nil},
		{"Bras", "Bra", nil},
		{"Panties", "Brief", nil},
		{"Shapewear", "Shaper", nil},
		{"Robes", "Robe", nil},
		{"Slippers", "Slipper", nil},
		{"Boots", "Boot", nil},
		{"Sandals", "Sandal", nil},
		{"Pumps", "Pump", nil},
		{"Flats", "Flat", nil},
		{"Earrings", "Earring", nil},
		{"Bracelets", "Bracelet", nil},
		{"Rings", "Ring", nil},
		{"Anklets", "Anklet", nil},
		{"Ponchos", "Poncho", nil},
	},
	"Boys": {
		{"Shirts", "Shirt", nil}, {"Pants", "Pant", nil}, {"Shoes", "Shoe", shoeChildren},
		{"Jeans", "Jean", nil}, {"Shorts", "Short", nil}, {"Jackets & Coats", "Jacket", nil},
		{"Sweaters", "Sweater", nil}, {"Hoodies & Sweatshirts", "Hoodie", nil},
		{"Active", "Athletic Short", nil}, {"Sleep & Robes", "Pajama Set", nil},
		{"Underwear", "Boxer Brief", nil}, {"Socks", "Sock", nil}, {"Swim", "Swim Trunk", nil},
		{"Suits & Sport Coats", "Blazer", nil}, {"Watches", "Watch", nil}, {"Belts", "Belt", nil},
		{"Hats & Caps", "Cap", nil}, {"Gloves & Mittens", "Glove", nil}, {"Ties", "Tie", nil},
		{"Backpacks", "Backpack", nil}, {"Costumes", "Costume", nil}, {"Rain Wear", "Rain Jacket", nil},
		{"Sunglasses", "Sunglasses", nil}, {"Overalls", "Overall", nil}, {"Clothing Sets", "Outfit", nil},
		{"Wallets", "Wallet", nil}, {"Umbrellas", "Umbrella", nil}, {"Jewelry", "Chain", nil},
	},
	"Girls": {
		{"Dresses", "Dress", nil}, {"Tops & Tees", "Top", nil}, {"Shoes", "Shoe", shoeChildren},
		{"Jeans", "Jean", nil}, {"Skirts & Skorts", "Skirt", nil}, {"Leggings", "Legging", nil},
		{"Pants & Capris", "Pant", nil}, {"Shorts", "Short", nil}, {"Jackets & Coats", "Jacket", nil},
		{"Sweaters", "Sweater", nil}, {"Hoodies & Sweatshirts", "Hoodie", nil}, {"Active", "Sports Top", nil},
		{"Sleepwear & Robes", "Nightgown", nil}, {"Underwear", "Brief", nil}, {"Socks & Tights", "Tights", nil},
		{"Swimwear", "Swimsuit", nil}, {"Jewelry", "Necklace", jewelryChildren}, {"Watches", "Watch", nil},
		{"Handbags", "Purse", nil}, {"Hair Accessories", "Hair Bow", nil}, {"Hats & Caps", "Hat", nil},
		{"Gloves & Mittens", "Mitten", nil}, {"Costumes", "Costume", nil}, {"Jumpsuits & Rompers", "Romper", nil},
		{"Clothing Sets", "Outfit", nil}, {"Rain Wear", "Raincoat", nil}, {"Backpacks", "Backpack", nil},
		{"Sunglasses", "Sunglasses", nil}, {"Belts", "Belt", nil}, {"Scarves", "Scarf", nil},
	},
	"Baby": {
		{"Baby Boys", "Bodysuit", nil}, {"Baby Girls", "Dress", nil}, {"Unisex Baby", "Onesie", nil},
		{"Shoes", "Crib Shoe", nil}, {"Accessories", "Bib", nil}, {"Gift Sets", "Gift Set", nil},
	},
}

// topQualifiers make further subcategories when a scale needs more than the
// base list ("Plus-Size Dresses"). Apostrophes here give category names that
// the Python repr must double-quote.
var topQualifiers = map[string][]string{
	"Men":   {"Big & Tall", "Athletic", "Work", "Vintage"},
	"Women": {"Plus-Size", "Petite", "Maternity", "Juniors'"},
	"Boys":  {"Toddler", "Little Boys'", "Big Boys'"},
	"Girls": {"Toddler", "Little Girls'", "Big Girls'"},
	"Baby":  {"Newborn", "Infant"},
}

// topTitleWord is the possessive that leads product titles of each top.
var topTitleWord = map[string]string{
	"Men": "Men's", "Women": "Women's", "Boys": "Boys'", "Girls": "Girls'", "Baby": "Baby",
}

// Paths outside the clothing tree, or beside its five tops, for items that
// scoping must exclude. The first three share words with clothing paths.
var foreignPaths = [][]string{
	{"Sports & Outdoors", "Clothing", "Men", "Shirts"},
	{"Clothing, Shoes & Jewelry", "Novelty, Costumes & More", "Costumes & Accessories"},
	{"Clothing, Shoes & Jewelry", "Luggage & Travel Gear", "Suitcases"},
	{"Electronics", "Computers & Accessories", "Cables & Accessories"},
	{"Electronics", "Headphones"},
	{"Home & Kitchen", "Bedding", "Blankets & Throws"},
	{"Beauty", "Fragrance"},
	{"Sports & Outdoors", "Outdoor Gear", "Camping & Hiking"},
}

var foreignNouns = []string{
	"USB Cable", "Headphones", "Throw Blanket", "Eau de Parfum", "Camping Lantern",
	"Laptop Sleeve", "Phone Case", "Travel Pillow", "Hiking Poles",
}

// secondPaths are extra category paths some clothing items also carry.
var secondPaths = [][]string{
	{"Clothing, Shoes & Jewelry", "Novelty, Costumes & More", "Novelty", "Clothing"},
	{"Clothing, Shoes & Jewelry", "Uniforms, Work & Safety"},
	{"Sports & Outdoors", "Clothing"},
	{"Clothing, Shoes & Jewelry", "Shoe, Jewelry & Watch Accessories"},
}

// salesRankCategories are the salesRank keys of the 2014 clothing file.
var salesRankCategories = []string{"Clothing", "Shoes", "Jewelry", "Watches", "Sports & Outdoors"}

// Brands are invented. Some carry the quirks of real brand strings: an
// apostrophe, an ampersand, an accent, a typographic apostrophe (U+2019,
// written as &#x92; on some lines), and the bogus entity &B; that real files
// contain and that HTML unescaping must leave alone.
var brands = []string{
	"Northwind", "Blue Harbor", "Kessler & Co.", "Maison Élan", "O'Malley",
	"Riverstone", "Cedar Lane", "Pinegrove", "Harlow & Finch", "Aster",
	"Brightwater", "Copperfield", "Dunmore", "Everly", "Fairhaven", "Goldcrest",
	"Hollis", "Ironbark", "Juniper Row", "Kingsley", "Lakeshore", "Marlowe",
	"Nettle & Thread", "Oakhurst", "Pemberton", "Quillon", "Redwood Supply",
	"Sable", "Thornbury", "Upland", "Vantage", "Wexford", "Yarrow", "Zephyr",
	"Café Noir", "L’Atelier", "R&B; Collection", "Crème de la Mode",
}

var colors = []string{
	"Black", "White", "Navy", "Heather Grey", "Charcoal", "Red", "Burgundy",
	"Olive", "Khaki", "Royal Blue", "Light Blue", "Pink", "Coral", "Ivory",
	"Brown", "Tan", "Camel", "Forest Green", "Purple", "Mustard", "Café",
	"Crème", "Rosé", "Multi",
}

var titleStyles = []string{
	"Classic", "Slim Fit", "Relaxed Fit", "Vintage", "Essential", "Premium",
	"Lightweight", "Quilted", "Stretch", "Cotton", "Wool Blend", "Printed",
	"Striped", "Solid", "Knit", "Faux Leather", "Organic", "Everyday",
}

// Topics of the review text (T = len(topics)): real nouns and adjectives,
// clothing flavoured. Each word has its own weights on the latent and an
// item's words are drawn by them (package doc, eq. 5); the topics group
// the words for the subcategory's home boost.
type topic struct {
	nouns []string
	adjs  []string
}

var topics = []topic{
	{[]string{"leather", "belt", "buckle", "wallet", "strap", "stitching", "hide", "grain"},
		[]string{"brown", "genuine", "sturdy", "rich", "tough", "solid"}},
	{[]string{"jeans", "denim", "pocket", "waist", "inseam", "hem", "rivet"},
		[]string{"slim", "tapered", "stiff", "rough", "tight", "classic"}},
	{[]string{"shoe", "sole", "heel", "toe", "lace", "insole", "arch"},
		[]string{"comfortable", "narrow", "wide", "cushioned", "flexible", "supportive"}},
	{[]string{"jacket", "coat", "hood", "zipper", "lining", "collar", "parka"},
		[]string{"warm", "heavy", "insulated", "dry", "strong", "large"}},
	{[]string{"dress", "gown", "fabric", "neckline", "hemline", "silhouette", "bodice"},
		[]string{"elegant", "formal", "beautiful", "gorgeous", "modern", "bold"}},
	{[]string{"necklace", "bracelet", "ring", "chain", "pendant", "clasp", "earring"},
		[]string{"shiny", "golden", "delicate", "sparkly", "fine", "real"}},
	{[]string{"watch", "band", "dial", "battery", "crystal", "bezel", "strap"},
		[]string{"luminous", "sleek", "expensive", "reliable", "glossy", "sharp"}},
	{[]string{"shorts", "gym", "workout", "mesh", "jersey", "drawstring"},
		[]string{"breathable", "athletic", "lightweight", "quick", "light", "cool"}},
	{[]string{"swimsuit", "bikini", "beach", "pool", "cover", "suit"},
		[]string{"bright", "colorful", "tropical", "modest", "hot", "white"}},
	{[]string{"pajamas", "robe", "blanket", "flannel", "slipper", "bed", "pillow"},
		[]string{"soft", "loose", "smooth", "quiet", "simple", "clean"}},
	{[]string{"socks", "liner", "stocking", "waistband", "cuff", "pair"},
		[]string{"thin", "durable", "short", "black", "hard", "weak"}},
	{[]string{"handbag", "purse", "compartment", "tote", "handle", "clutch"},
		[]string{"spacious", "stylish", "structured", "practical", "trendy", "big"}},
	{[]string{"baby", "onesie", "snap", "toddler", "diaper", "ribbon"},
		[]string{"adorable", "tiny", "precious", "sweet", "little", "gentle"}},
	{[]string{"shirt", "blouse", "tee", "button", "sleeve", "placket"},
		[]string{"casual", "fitted", "boxy", "white", "red", "green"}},
	{[]string{"sweater", "cardigan", "wool", "yarn", "knit", "turtleneck"},
		[]string{"oversized", "gray", "heavy", "cold", "rough", "green"}},
	{[]string{"hat", "scarf", "glove", "cap", "brim", "beanie"},
		[]string{"adjustable", "floppy", "wide", "red", "small", "big"}},
	{[]string{"sunglasses", "lens", "frame", "case", "glare", "hinge"},
		[]string{"polarized", "black", "cheap", "large", "bold", "classic"}},
	{[]string{"boot", "shaft", "calf", "tread", "ankle", "suede"},
		[]string{"tall", "tough", "rough", "hard", "heavy", "brown"}},
	{[]string{"costume", "mask", "wig", "party", "halloween", "cape"},
		[]string{"funny", "scary", "festive", "loud", "cheap", "huge"}},
	{[]string{"seam", "thread", "color", "stain", "dryer", "wrinkle"},
		[]string{"washable", "wrinkled", "clean", "dry", "weak", "stiff"}},
}

// Filler words used next to the topic words.
var fillerNouns = []string{"product", "size", "price", "quality", "color", "fit", "material", "item", "purchase", "style"}
var fillerAdjs = []string{"good", "nice", "great", "perfect", "excellent", "decent", "fine", "awesome"}

var firstNames = []string{
	"Mary", "John", "Linda", "James", "Patricia", "Robert", "Jennifer", "Michael",
	"Susan", "David", "Karen", "William", "Nancy", "Richard", "Lisa", "Joseph",
	"Sandra", "Thomas", "Ashley", "Charles", "Zoë", "José", "Renée", "Seán",
}

var lastNames = []string{
	"Smith", "Johnson", "Brown", "Miller", "Davis", "Garcia", "Wilson", "Moore",
	"Taylor", "Anderson", "Thomas", "Jackson", "White", "Harris", "Martin", "O'Brien",
	"Nguyen", "Müller", "Clarke", "Lopez",
}
